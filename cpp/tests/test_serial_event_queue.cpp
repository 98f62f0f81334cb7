// Property test of SerialEventQueue against std::priority_queue with the
// contract's comparator (EventAfter: time, then source, then seq).
//
// Random streams of interleaved pushes and pops, built to tie often: times
// from a handful of values (with -0.0 next to +0.0, negatives and huge
// values), few sources, and seqs pushed out of order so that (time, source)
// ties are decided by seq; in half the streams seqs cross 2^32 - 1. Every pop, top(), top_time(), size() and the pending multiset
// (for_each) must match the reference exactly, payload bytes included;
// clear() must leave a queue that behaves as a new one. Two streams grow the
// queue past the size where its pop switches to branching comparisons.
// take_all must hand over every event once, offer only emptied memory, and
// keep what a throwing handler did not take.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

#include "check.hpp"
#include "queue_check.hpp"
#include "seer/event.hpp"
#include "serial_event_queue.hpp"

namespace {

bool same_event(const seer::Event& a, const seer::Event& b) {
  return std::memcmp(&a, &b, sizeof(seer::Event)) == 0;
}

std::tuple<double, seer::EntityId, std::uint64_t> key(const seer::Event& e) {
  return {e.time + 0.0, e.source, e.seq};
}

using Reference =
    std::priority_queue<seer::Event, std::vector<seer::Event>, seer::EventAfter>;

// One stream: `ops` operations, pushes with probability `push_share`; the
// pending set is compared every `check_every` operations (a full copy of the
// reference: keep it rare on large queues, TSan runs this test too).
void run_stream(std::uint64_t seed, long ops, double push_share, int num_times, int num_sources,
                long check_every = 997) {
  std::mt19937_64 rng(seed);
  const double special[] = {0.0, -0.0, 1.0, 1.5, -2.0, 1e300, 5e-324, 0.1 + 0.2, 0.3};
  std::vector<double> times;
  for (int i = 0; i < num_times; ++i) {
    times.push_back(i < 9 ? special[i] : std::ldexp(static_cast<double>(rng() % 1000), -3));
  }
  // Next seq per source, handed out in shuffled blocks so that seq order and
  // push order disagree. In odd streams some sources run past 2^32 - 1, where
  // the queue's packed keys saturate and it must compare the events' seqs.
  std::vector<std::uint64_t> next_seq(num_sources);
  for (int s = 0; s < num_sources; ++s) {
    next_seq[s] = (seed % 2 == 1 && s % 3 == 0) ? (1ULL << 32) - 5 : 0;
  }
  std::vector<seer::Event> backlog;  // made but not yet pushed (shuffled)

  seer::SerialEventQueue queue;
  Reference reference;
  for (long op = 0; op < ops; ++op) {
    const bool push = reference.empty() || std::uniform_real_distribution<>(0, 1)(rng) < push_share;
    if (push) {
      if (backlog.empty()) {
        for (int i = 0; i < 8; ++i) {
          seer::Event e;
          e.source = static_cast<seer::EntityId>(rng() % num_sources);
          e.seq = next_seq[e.source]++;
          e.time = times[rng() % times.size()];
          e.target = static_cast<seer::EntityId>(rng() % 7);
          e.kind = static_cast<seer::EventKind>(rng() % 3);
          const std::uint64_t word = rng();
          std::memcpy(e.payload, &word, sizeof word);
          std::memcpy(e.payload + 56, &op, sizeof op);
          backlog.push_back(e);
        }
        std::shuffle(backlog.begin(), backlog.end(), rng);
      }
      queue.push(backlog.back());
      reference.push(backlog.back());
      backlog.pop_back();
    } else {
      CHECK(queue.top_time() == reference.top().time, queue_check::at_operation("top_time", op));
      CHECK(same_event(queue.top(), reference.top()), queue_check::at_operation("top", op));
      const seer::Event got = queue.pop();
      CHECK(same_event(got, reference.top()), queue_check::at_operation("pop order", op));
      reference.pop();
    }
    CHECK(queue.size() == reference.size(), queue_check::at_operation("size", op));
    CHECK(queue.empty() == reference.empty(), queue_check::at_operation("empty", op));
    if (op % check_every == 0) {
      std::vector<std::tuple<double, seer::EntityId, std::uint64_t>> mine, theirs;
      queue.for_each([&](const seer::Event& e) { mine.push_back(key(e)); });
      Reference copy = reference;
      for (; !copy.empty(); copy.pop()) theirs.push_back(key(copy.top()));
      std::sort(mine.begin(), mine.end());
      std::sort(theirs.begin(), theirs.end());
      CHECK(mine == theirs, queue_check::at_operation("for_each visits the pending events", op));
    }
  }
  while (!reference.empty()) {
    CHECK(!queue.empty() && same_event(queue.pop(), reference.top()),
          queue_check::at_operation("drain order", ops));
    reference.pop();
  }
  CHECK(queue.empty() && std::isinf(queue.top_time()), queue_check::at_operation("drained", ops));
}

void test_random_streams() {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const int num_times = 2 + static_cast<int>(seed % 9) * 3;  // 2 .. 26 distinct times
    const int num_sources = 1 + static_cast<int>(seed % 5);    // 1 .. 5 sources
    const double push_share = seed % 4 == 0 ? 0.5 : 0.55 + 0.1 * static_cast<double>(seed % 4);
    run_stream(seed, 20000, push_share, num_times, num_sources);
  }
  // Past kBranchlessMax (16384 keys) the pop branches instead: grow beyond it.
  run_stream(101, 80000, 0.75, 26, 5, 20011);
  run_stream(102, 80000, 0.75, 7, 2, 20011);
}

// A queue that grew, was cleared and reused behaves like a new one.
void test_clear_and_reuse() {
  seer::SerialEventQueue queue;
  Reference reference;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 1000; ++i) {
      seer::Event e;
      e.time = static_cast<double>((i * 7919 + round) % 13);
      e.source = static_cast<seer::EntityId>(i % 3);
      e.seq = static_cast<std::uint64_t>(1000 - i);
      queue.push(e);
      if (round == 2) reference.push(e);
    }
    if (round < 2) {
      queue.clear();
      CHECK(queue.empty() && queue.size() == 0, queue_check::at_operation("clear", round));
    }
  }
  while (!reference.empty()) {
    CHECK(same_event(queue.pop(), reference.top()),
          queue_check::at_operation("order after clear", 0));
    reference.pop();
  }
}

// take_all: every pending event handed over once, the slab's emptied end
// offered to `release` only after every event in it was handed over; and
// when the handler throws, the events not taken stay, in key order.
struct Taken {
  std::vector<seer::Event> events;
  std::vector<const void*> addresses;    // where each event sat
  std::vector<std::size_t> release_at;   // events taken when release was called
  std::vector<const char*> release_from;
  std::vector<const char*> release_end;
};

std::vector<std::tuple<double, seer::EntityId, std::uint64_t>> keys_of(
    const std::vector<seer::Event>& events) {
  std::vector<std::tuple<double, seer::EntityId, std::uint64_t>> keys;
  for (const seer::Event& e : events) keys.push_back(key(e));
  std::sort(keys.begin(), keys.end());
  return keys;
}

void check_take_all(std::uint64_t seed, long pushes, long throw_after) {
  std::mt19937_64 rng(seed);
  seer::SerialEventQueue queue;
  std::vector<seer::Event> pending;  // the reference's events, unordered
  std::uint64_t seq = 0;
  auto push_some = [&](long n, double from) {
    for (long i = 0; i < n; ++i) {
      seer::Event e;
      e.time = from + std::ldexp(static_cast<double>(rng() % 4096), -4);
      e.source = static_cast<seer::EntityId>(rng() % 5);
      e.seq = seq++;
      e.target = static_cast<seer::EntityId>(rng() % 7);
      const std::uint64_t word = rng();
      std::memcpy(e.payload, &word, sizeof word);
      queue.push(e);
      pending.push_back(e);
    }
  };
  // Pops between the pushes leave free slots, a part-drained run and a
  // calendar in use; a far event sits in the far list.
  push_some(pushes, 0.0);
  Reference reference(pending.begin(), pending.end());
  for (long i = 0; i < pushes / 3; ++i) {
    reference.pop();
    queue.pop();
  }
  push_some(pushes / 4, 100.0);
  push_some(1, 1e9);
  pending.clear();
  queue.for_each([&](const seer::Event& e) { pending.push_back(e); });
  const std::size_t before = queue.size();

  Taken taken;
  const auto at = queue_check::at("take_all", seed, throw_after);
  bool threw = false;
  try {
    queue.take_all(
        [&](const seer::Event& e) {
          if (static_cast<long>(taken.events.size()) == throw_after) throw std::bad_alloc();
          taken.events.push_back(e);
          taken.addresses.push_back(&e);
        },
        [&](void* from, std::size_t bytes) {
          taken.release_at.push_back(taken.events.size());
          taken.release_from.push_back(static_cast<const char*>(from));
          taken.release_end.push_back(static_cast<const char*>(from) + bytes);
        });
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK(threw == (throw_after >= 0 && throw_after < static_cast<long>(before)), at);
  CHECK(taken.events.size() + queue.size() == before, at);
  // Taken and left are the pending events, none lost or doubled.
  std::vector<seer::Event> left;
  queue.for_each([&](const seer::Event& e) { left.push_back(e); });
  std::vector<seer::Event> both = taken.events;
  both.insert(both.end(), left.begin(), left.end());
  CHECK(keys_of(both) == keys_of(pending), at);
  // What release was offered lies above every event taken after it (and
  // ends where the first offer ended: the slab's end).
  for (std::size_t r = 0; r < taken.release_at.size(); ++r) {
    CHECK(taken.release_end[r] == taken.release_end[0], at);
    CHECK(r == 0 || taken.release_from[r] < taken.release_from[r - 1], at);
    for (std::size_t k = taken.release_at[r]; k < taken.addresses.size(); ++k) {
      CHECK(static_cast<const char*>(taken.addresses[k]) < taken.release_from[r], at);
    }
  }
  if (pushes * static_cast<long>(sizeof(seer::Event)) > (2L << 20) && !threw) {
    CHECK(taken.release_at.size() >= 2, at);  // a slab of several MiB is offered as it empties
  }
  // What is left pops in key order, and the queue goes on as a queue
  // (pushes past the heap-only limit bring the calendar back).
  Reference rest(left.begin(), left.end());
  for (long i = 0; i < static_cast<long>(left.size()) / 2; ++i) {
    CHECK(same_event(queue.pop(), rest.top()), at);
    rest.pop();
  }
  pending.clear();
  push_some(pushes, 200.0);
  for (const seer::Event& e : pending) rest.push(e);
  for (; !rest.empty(); rest.pop()) {
    CHECK(!queue.empty() && same_event(queue.pop(), rest.top()), at);
  }
  CHECK(queue.empty(), at);
}

void test_take_all() {
  check_take_all(1, 50, -1);
  check_take_all(2, 3000, -1);
  check_take_all(3, 40000, -1);  // 5 MiB of events: offered in parts
  for (const long after : {0L, 1L, 17L, 1500L, 2498L}) check_take_all(4 + after, 3000, after);
  check_take_all(5, 40000, 30000);
}

}  // namespace

int main() {
  check::stop_after = 20;  // a broken queue fails every later operation
  test_random_streams();
  test_clear_and_reuse();
  test_take_all();
  return check::report("test_serial_event_queue");
}
