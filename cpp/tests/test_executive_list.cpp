// Stress test of ExecutiveList: the per-entity queued flag (claimed by CAS in
// push(), released by done()) and the push-barrier-pop protocol.
//
// kThreads threads run kRounds rounds, each separated into phases by a
// mutex/condition-variable barrier (deliberately not SpinBarrier, which is
// tested elsewhere, so a failure here points at ExecutiveList):
// Even threads push/pop one at a time (push, pop), odd ones in batches
// (push_batch, pop_batch), so both paths race with each other.
//   A  every thread pushes a random, overlapping sample of ids in [0, N/3)
//   -  check: each id pushed by anyone was accepted exactly once
//   P  every thread pops until empty
//   -  check: the popped multiset equals the accepted set; size_approx() == 0;
//      reset() (the protocol: failed pops move the head past the tail, so
//      pushing again without a reset would lose entries)
//   B  every thread calls done() on what it popped while all threads push a
//      random sample of ids in [0, N) (so pushes race with done() on the
//      same ids)
//   -  check: each id accepted at most once in B; ids never queued in A
//      that were pushed in B were accepted exactly once
//   P  pop again: exactly B's accepted set; done() on each
//   -  check (one thread): every id is idle again (push accepted), then
//      drain, done() all and reset() for the next round.
// Capacity is N and a round between resets accepts at most N ids.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "check.hpp"
#include "executive_list.hpp"

namespace {

constexpr unsigned kThreads = 8;
constexpr unsigned kRounds = 600;
constexpr std::uint32_t kN = 3000;  // capacity and id range

// A plain blocking barrier; `on_last` runs alone, before anyone is released.
class TestBarrier {
 public:
  explicit TestBarrier(unsigned n) : n_(n) {}
  template <class Fn>
  void wait(Fn&& on_last) {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t gen = generation_;
    if (++arrived_ == n_) {
      on_last();
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != gen; });
  }
  void wait() {
    wait([] {});
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  const unsigned n_;
  unsigned arrived_ = 0;
  std::uint64_t generation_ = 0;
};

struct PerThread {
  std::vector<seer::EntityId> attempted_a, accepted_a, popped_a;
  std::vector<seer::EntityId> attempted_b, accepted_b, popped_b;
};

void sample(std::mt19937_64& rng, std::uint32_t range, std::vector<seer::EntityId>& out) {
  out.clear();
  for (std::uint32_t id = 0; id < range; ++id) {
    if (rng() % 2 == 0) out.push_back(id);
  }
  std::shuffle(out.begin(), out.end(), rng);
}

// Count of each id over one member of every thread's record.
std::vector<unsigned> tally(const std::vector<PerThread>& t,
                            std::vector<seer::EntityId> PerThread::*member) {
  std::vector<unsigned> n(kN, 0);
  for (const PerThread& p : t) {
    for (seer::EntityId id : p.*member) ++n[id];
  }
  return n;
}

void check_after_push_a(const std::vector<PerThread>& t, const seer::ExecutiveList& list) {
  const auto attempted = tally(t, &PerThread::attempted_a);
  const auto accepted = tally(t, &PerThread::accepted_a);
  std::size_t expected = 0;
  for (std::uint32_t id = 0; id < kN; ++id) {
    if (accepted[id] > 1) FAIL("A: id accepted more than once", id, accepted[id]);
    if (attempted[id] > 0 && accepted[id] != 1)
      FAIL("A: id pushed but not accepted exactly once", id, accepted[id]);
    expected += accepted[id];
  }
  if (list.size_approx() != expected)
    FAIL("A: size_approx() != accepted", list.size_approx(), expected);
}

void check_pops(const std::vector<PerThread>& t, std::vector<seer::EntityId> PerThread::*accepted_m,
                std::vector<seer::EntityId> PerThread::*popped_m, const char* what,
                const seer::ExecutiveList& list) {
  const auto accepted = tally(t, accepted_m);
  const auto popped = tally(t, popped_m);
  for (std::uint32_t id = 0; id < kN; ++id) {
    if (popped[id] != accepted[id]) FAIL(what, id, popped[id]);
  }
  if (list.size_approx() != 0) FAIL("size_approx() != 0 after popping everything");
}

void check_after_push_b(const std::vector<PerThread>& t) {
  const auto accepted_a = tally(t, &PerThread::accepted_a);
  const auto attempted_b = tally(t, &PerThread::attempted_b);
  const auto accepted_b = tally(t, &PerThread::accepted_b);
  for (std::uint32_t id = 0; id < kN; ++id) {
    if (accepted_b[id] > 1) FAIL("B: id accepted more than once", id, accepted_b[id]);
    if (accepted_a[id] == 0 && attempted_b[id] > 0 && accepted_b[id] != 1) {
      FAIL("B: idle id pushed but not accepted exactly once", id, accepted_b[id]);
    }
  }
}

// Even threads use push(), odd ones push_batch() with random batch sizes
// (push_batch compacts the accepted ids to the front of its buffer).
void push_all(seer::ExecutiveList& list, unsigned me, std::mt19937_64& rng,
              const std::vector<seer::EntityId>& ids, std::vector<seer::EntityId>& accepted) {
  if (me % 2 == 0) {
    for (seer::EntityId id : ids) {
      if (list.push(id)) accepted.push_back(id);
    }
    return;
  }
  seer::EntityId buffer[32];
  for (std::size_t i = 0; i < ids.size();) {
    const std::size_t n = std::min<std::size_t>(1 + rng() % 32, ids.size() - i);
    std::copy(ids.begin() + i, ids.begin() + i + n, buffer);
    const std::size_t kept = list.push_batch(buffer, n);
    if (kept > n) FAIL("push_batch() kept more than it was given", kept, n);
    accepted.insert(accepted.end(), buffer, buffer + kept);
    i += n;
  }
}

// Even threads use pop(), odd ones pop_batch() with random maxima.
void pop_all(seer::ExecutiveList& list, unsigned me, std::mt19937_64& rng,
             std::vector<seer::EntityId>& popped) {
  if (me % 2 == 0) {
    seer::EntityId e;
    while (list.pop(e)) popped.push_back(e);
    return;
  }
  for (;;) {
    const std::size_t max = 1 + rng() % 16;
    const seer::EntityId* first = nullptr;
    const std::size_t n = list.pop_batch(max, &first);
    if (n == 0) return;
    if (n > max) FAIL("pop_batch() returned more than max", n, max);
    popped.insert(popped.end(), first, first + n);
  }
}

void worker(unsigned me, seer::ExecutiveList& list, TestBarrier& barrier,
            std::vector<PerThread>& t) {
  std::mt19937_64 rng(4242 + me);
  PerThread& mine = t[me];
  for (unsigned round = 0; round < kRounds; ++round) {
    // A: overlapping pushes.
    sample(rng, kN / 3, mine.attempted_a);
    mine.accepted_a.clear();
    push_all(list, me, rng, mine.attempted_a, mine.accepted_a);
    barrier.wait([&] { check_after_push_a(t, list); });

    // P: pops after the barrier.
    mine.popped_a.clear();
    seer::EntityId e;
    pop_all(list, me, rng, mine.popped_a);
    if (list.pop(e)) FAIL("pop() succeeded after returning false");
    const seer::EntityId* first = nullptr;
    if (list.pop_batch(4, &first) != 0) FAIL("pop_batch() succeeded after the list emptied");
    barrier.wait([&] {
      check_pops(t, &PerThread::accepted_a, &PerThread::popped_a, "A: popped != accepted", list);
      // The protocol: reset() between a round's pops and the next pushes
      // (failed pops move the head past the tail).
      list.reset();
    });

    // B: done() races with pushes of the same ids.
    sample(rng, kN, mine.attempted_b);
    mine.accepted_b.clear();
    std::size_t next_done = 0;
    for (std::size_t i = 0; i < mine.attempted_b.size(); i += 8) {
      // Interleave done() calls with pushes (one by one or batched).
      for (int k = 0; k < 4 && next_done < mine.popped_a.size(); ++k) {
        list.done(mine.popped_a[next_done++]);
      }
      const std::size_t end = std::min(i + 8, mine.attempted_b.size());
      const std::vector<seer::EntityId> chunk(mine.attempted_b.begin() + i,
                                              mine.attempted_b.begin() + end);
      push_all(list, me, rng, chunk, mine.accepted_b);
    }
    while (next_done < mine.popped_a.size()) list.done(mine.popped_a[next_done++]);
    barrier.wait([&] { check_after_push_b(t); });

    mine.popped_b.clear();
    pop_all(list, me, rng, mine.popped_b);
    barrier.wait([&] {
      check_pops(t, &PerThread::accepted_b, &PerThread::popped_b, "B: popped != accepted", list);
    });
    for (seer::EntityId id : mine.popped_b) list.done(id);

    barrier.wait([&] {
      // Everything is idle again: a single thread can claim every id once.
      list.reset();
      for (std::uint32_t id = 0; id < kN; ++id) {
        if (!list.push(id)) FAIL("id still queued after done()", id, round);
        if (list.push(id)) FAIL("id accepted twice in a row", id, round);
      }
      std::uint32_t n = 0;
      while (list.pop(e)) {
        list.done(e);
        ++n;
      }
      if (n != kN) FAIL("sequential pops != pushes", n, kN);
      list.reset();
    });
  }
}

// The parallel engine's protocol: one list per thread over its own slice of
// ids (first_id > 0 for all but the first); each round every owner pushes a
// random subset of its slice and seals; then, with no barrier in between,
// it pops its own list and steals from every other list once sealed. Every
// pushed id must be popped exactly once per round, by anyone.
void sliced_lists_round_trip() {
  constexpr unsigned kOwners = 4;
  constexpr std::uint32_t kSlice = 700;
  constexpr unsigned kSlicedRounds = 400;
  std::vector<std::unique_ptr<seer::ExecutiveList>> lists;
  for (unsigned w = 0; w < kOwners; ++w) {
    lists.push_back(std::make_unique<seer::ExecutiveList>(kSlice, w * kSlice));
    if (lists[w]->first_id() != w * kSlice) FAIL("first_id()", lists[w]->first_id(), w * kSlice);
  }
  std::vector<std::atomic<std::uint32_t>> popped(kOwners * kSlice);
  std::vector<std::atomic<std::uint32_t>> pushed(kOwners * kSlice);
  for (auto& p : popped) p.store(0);
  for (auto& p : pushed) p.store(0);
  TestBarrier barrier(kOwners);
  auto owner = [&](unsigned me) {
    std::mt19937_64 rng(1234 + me);
    std::vector<seer::EntityId> ids;
    for (unsigned round = 0; round < kSlicedRounds; ++round) {
      ids.clear();
      for (std::uint32_t k = 0; k < kSlice; ++k) {
        if (rng() % 3 == 0) ids.push_back(me * kSlice + k);
      }
      const std::size_t n = ids.size();
      if (lists[me]->push_batch(ids.data(), n) != n) FAIL("sliced: push_batch lost ids", me, round);
      for (std::size_t k = 0; k < n; ++k) pushed[ids[k]].fetch_add(1);
      lists[me]->seal();
      for (unsigned k = 0; k < kOwners; ++k) {
        seer::ExecutiveList& list = *lists[(me + k) % kOwners];
        while (!list.sealed()) std::this_thread::yield();
        const seer::EntityId* first = nullptr;
        for (std::size_t got; (got = list.pop_batch(1 + rng() % 8, &first)) != 0;) {
          for (std::size_t j = 0; j < got; ++j) {
            const seer::EntityId id = first[j];
            if (id < list.first_id() || id >= list.first_id() + kSlice) {
              FAIL("sliced: popped an id outside the list's slice", id, round);
              continue;
            }
            popped[id].fetch_add(1);
            list.done(id);
          }
        }
      }
      barrier.wait([&] {
        for (std::uint32_t id = 0; id < kOwners * kSlice; ++id) {
          if (popped[id].load() != pushed[id].load()) {
            FAIL("sliced: popped count != pushed count", id, round);
          }
        }
        for (auto& list : lists) {
          if (list->sealed() == false) FAIL("sliced: list unsealed before reset", round);
          list->reset();
          if (list->sealed()) FAIL("sliced: reset() left the list sealed", round);
        }
      });
    }
  };
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < kOwners; ++w) threads.emplace_back(owner, w);
  for (auto& t : threads) t.join();
}

}  // namespace

int main() {
  sliced_lists_round_trip();

  seer::ExecutiveList list(kN);
  if (list.capacity() != kN) FAIL("capacity()", list.capacity(), kN);
  seer::EntityId e;
  if (list.pop(e)) FAIL("pop() on a new list succeeded");
  list.reset();

  TestBarrier barrier(kThreads);
  std::vector<PerThread> per_thread(kThreads);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < kThreads; ++i) {
    threads.emplace_back(worker, i, std::ref(list), std::ref(barrier), std::ref(per_thread));
  }
  for (auto& t : threads) t.join();

  std::printf("test_executive_list: %u threads, %u rounds, %u ids\n", kThreads, kRounds, kN);
  return check::report("test_executive_list");
}
