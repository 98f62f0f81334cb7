// The parallel executor's ready-work protocol without a scan, in two parts.
//
// 1. WakeCalendar against a brute-force multiset: random adds (ties, far
//    times, times before the ring, widths from 1e-3 to 1e3) and takes with
//    rising horizons; every take must return exactly the entries before the
//    horizon, earliest() the smallest entry left.
//
// 2. The wake protocol under threads, as the engine runs it: per phase
//    (a RoundBarrier between phases), every worker takes the queues of its
//    slice that hold a wake, drains them while the others push events into
//    any queue (LocalQueue::push_remote); a push that returns true sends a
//    wake to the queue's owner through a per-phase outbox, which the owner
//    reads after the barrier. After each barrier, with every thread waiting,
//    the main invariant is checked: every event still in an inbox is covered
//    by a wake at or before its time. At the end every event was drained
//    exactly once. A drain that kept a stale inbox bound (the race the
//    bound's reset in LocalQueue::drain() closes) loses a wake here.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "local_queue.hpp"
#include "round_barrier.hpp"
#include "wake_calendar.hpp"

namespace {

int failures = 0;
void expect(bool ok, const char* what, unsigned long long a = 0, unsigned long long b = 0) {
  if (!ok && ++failures <= 20) std::fprintf(stderr, "FAILED: %s (%llu, %llu)\n", what, a, b);
}

constexpr double kNever = std::numeric_limits<double>::infinity();

void calendar_against_multiset() {
  for (double width : {1e-3, 0.1, 1.0, 7.0, 1e3}) {
    for (unsigned seed = 0; seed < 20; ++seed) {
      std::mt19937_64 rng(seed * 7919 + static_cast<unsigned>(width * 1000));
      seer::WakeCalendar calendar;
      double now = static_cast<double>(rng() % 100) * width;
      calendar.reset(width, now);
      std::multimap<double, seer::EntityId> model;
      std::vector<seer::EntityId> out;
      std::uint64_t checks = 0;
      for (int round = 0; round < 200; ++round) {
        const int adds = static_cast<int>(rng() % 40);
        for (int k = 0; k < adds; ++k) {
          double t;
          switch (rng() % 5) {
            case 0: t = now; break;  // a tie at the current time
            case 1: t = now + static_cast<double>(rng() % 8) * width; break;  // bucket edges
            case 2: t = now + static_cast<double>(rng() % 100000) * width * 0.37; break;  // far
            case 3: t = now * 0.5; break;  // before the ring (clamped into it)
            default: t = now + std::uniform_real_distribution<double>(0, 3 * width)(rng);
          }
          const auto e = static_cast<seer::EntityId>(rng() % 64);
          calendar.add(t, e);
          model.emplace(t, e);
        }
        const double lb = model.empty() ? now : model.begin()->first;
        expect(calendar.earliest() == (model.empty() ? kNever : lb), "earliest() is the minimum",
               round, seed);
        expect(calendar.size() == model.size(), "size", calendar.size(), model.size());
        const double horizon = (rng() % 10 == 0) ? lb + 1e4 * width : lb + width;
        out.clear();
        calendar.take(horizon, 1000, out, checks);
        std::vector<seer::EntityId> expected;
        while (!model.empty() && model.begin()->first < horizon) {
          expected.push_back(1000 + model.begin()->second);
          model.erase(model.begin());
        }
        std::sort(out.begin(), out.end());
        std::sort(expected.begin(), expected.end());
        expect(out == expected, "take() returns exactly the entries before the horizon",
               out.size(), expected.size());
        now = std::max(now, horizon);
      }
    }
  }
  std::printf("  calendar against a multiset: ok\n");
}

// -- Part 2.
constexpr unsigned kWorkers = 4;
constexpr unsigned kQueues = 12;  // slice of worker w: queues [3w, 3w + 3)
constexpr unsigned kPhases = 400;
constexpr unsigned kPushesPerPhase = 60;

struct Notice {
  double time;
  unsigned queue;
};

unsigned owner_of(unsigned q) { return q / (kQueues / kWorkers); }

void wake_protocol_under_threads() {
  std::vector<seer::LocalQueue> queues(kQueues);
  seer::NodePool pools[kWorkers];
  // Per queue, the owner's pending wakes (times); only the owner touches
  // them during a phase.
  std::vector<std::vector<double>> wakes(kQueues);
  std::vector<Notice> outbox[2][kWorkers][kWorkers];  // [parity][sender][owner]
  std::vector<std::uint64_t> drained(kWorkers * kPhases * kPushesPerPhase, 0);
  seer::RoundBarrier barrier(kWorkers + 1);  // the workers and the checker
  std::atomic<bool> stop_pushing{false};

  // Nothing pending: no event in any queue, no wake in any outbox.
  auto idle = [&] {
    for (unsigned q = 0; q < kQueues; ++q) {
      if (queues[q].size() != 0) return false;
    }
    for (auto& by_parity : outbox) {
      for (auto& by_sender : by_parity) {
        for (auto& notices : by_sender) {
          if (!notices.empty()) return false;
        }
      }
    }
    return true;
  };
  auto worker = [&](unsigned w) {
    std::mt19937_64 rng(w + 17);
    std::uint64_t seq = 0;
    std::vector<unsigned> mine;
    for (unsigned phase = 0;; ++phase) {
      // Absorb the wakes sent to me in the previous phase.
      const unsigned parity = phase & 1, previous = parity ^ 1;
      for (unsigned s = 0; s < kWorkers; ++s) {
        for (const Notice& n : outbox[previous][s][w]) wakes[n.queue].push_back(n.time);
        outbox[previous][s][w].clear();
      }
      // Take my queues with a wake (all their wakes), as a round takes the
      // entries before its horizon; push events; drain the taken queues.
      mine.clear();
      for (unsigned q = w * 3; q < w * 3 + 3; ++q) {
        if (!wakes[q].empty()) {
          wakes[q].clear();
          mine.push_back(q);
        }
      }
      const bool pushing = !stop_pushing.load(std::memory_order_relaxed);
      for (unsigned k = 0; k < kPushesPerPhase; ++k) {
        if (pushing) {
          const auto q = static_cast<unsigned>(rng() % kQueues);
          seer::EventNode* node = pools[w].allocate();
          node->event.time = static_cast<double>(phase) + static_cast<double>(rng() % 50);
          node->event.source = w;
          node->event.seq = seq++;
          const double time = node->event.time;
          if (queues[q].push_remote(node)) outbox[parity][w][owner_of(q)].push_back({time, q});
        }
        // Interleave drains with the pushes so that they race.
        if (k % 20 == 10) {
          for (unsigned q : mine) {
            queues[q].drain();
            while (!queues[q].empty_local()) {
              seer::EventNode* node = queues[q].pop();
              ++drained[(node->event.source * kPhases * kPushesPerPhase) + node->event.seq];
              pools[w].release(node);
            }
          }
        }
      }
      barrier.arrive_and_wait();  // end of phase: the checker looks
      barrier.arrive_and_wait();  // the checker is done
      if (phase >= kPhases && !pushing) {
        const bool done = idle();  // everyone only reads until the next barrier
        barrier.arrive_and_wait();
        if (done) return;
      }
    }
  };

  std::vector<std::thread> threads;
  for (unsigned w = 0; w < kWorkers; ++w) threads.emplace_back(worker, w);
  for (unsigned phase = 0;; ++phase) {
    barrier.arrive_and_wait();
    // Quiescent: every inbox event must be covered by a wake at or before
    // its time, pending with its owner or in an outbox of this phase.
    for (unsigned q = 0; q < kQueues; ++q) {
      double covered = kNever;
      for (double t : wakes[q]) covered = std::min(covered, t);
      for (unsigned s = 0; s < kWorkers; ++s) {
        for (const Notice& n : outbox[phase & 1][s][owner_of(q)]) {
          if (n.queue == q) covered = std::min(covered, n.time);
        }
      }
      double earliest_inbox = kNever;
      queues[q].for_each([&](const seer::Event& e) { earliest_inbox = std::min(earliest_inbox, e.time); });
      // for_each visits the heap too: a taken queue's heap is empty after
      // its drains (all popped), so what is left is the inbox.
      expect(covered <= earliest_inbox, "an inbox event without a wake", q, phase);
    }
    if (phase + 1 == kPhases) stop_pushing.store(true, std::memory_order_relaxed);
    barrier.arrive_and_wait();
    if (phase >= kPhases) {
      const bool done = idle();
      barrier.arrive_and_wait();
      if (done) break;
      if (phase > kPhases + 10) {
        expect(false, "events left undrained long after the last push", phase);
        std::_Exit(EXIT_FAILURE);
      }
    }
  }
  for (auto& t : threads) t.join();
  std::uint64_t pushed = 0, once = 0;
  for (std::uint64_t count : drained) {
    pushed += count != 0;
    once += count == 1;
  }
  expect(pushed == once, "an event drained twice", pushed, once);
  std::printf("  wake protocol under %u threads: %llu events, each drained once\n", kWorkers,
              static_cast<unsigned long long>(pushed));
}

}  // namespace

int main() {
  calendar_against_multiset();
  wake_protocol_under_threads();
  if (failures == 0) {
    std::printf("test_wake_protocol: all passed\n");
  } else {
    std::fprintf(stderr, "test_wake_protocol: %d failure(s)\n", failures);
  }
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
