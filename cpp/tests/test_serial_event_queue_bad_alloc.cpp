// SerialEventQueue under allocation failure, against std::priority_queue
// with the contract's comparator (EventAfter: time, then source, then seq).
//
// This executable replaces the global operator new (plain and aligned) with
// one that can be told to throw std::bad_alloc at the n-th allocation from
// now. Calendar-shaped streams (pops advance a clock, pushes land ahead of
// it, thousands pending, so buckets load, the width rebuilds and heap-only
// queues grow into calendars) run with failures armed inside push() and
// pop(). Each call either completes or throws with nothing changed (the
// strong guarantee): a push that throws queued nothing, a pop that throws
// removed nothing. Every later pop, top(), top_time() and size() must match
// the reference exactly. (A pop that threw once left run and heap empty with
// events in the ring, and the next pop read a stale heap key.)
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

// Allocations left before one throws; negative: none throws. Single thread.
long fail_in = -1;
std::uint64_t failed = 0;  // allocations made to throw

void maybe_fail() {
  if (fail_in < 0) return;
  if (fail_in-- == 0) {
    ++failed;
    throw std::bad_alloc();
  }
}

}  // namespace

// GCC cannot see that these replace the global allocation functions, and
// takes their malloc/free pairs for mismatched new/delete.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t n) {
  maybe_fail();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void* operator new(std::size_t n, std::align_val_t align) {
  maybe_fail();
  const std::size_t a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a + (n == 0 ? a : 0))) return p;
  throw std::bad_alloc();
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
// The nothrow forms too (sanitizer runtimes define their own otherwise).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n, align);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using queue_check::Reference;
using queue_check::same_event;

// Runs `op` with the allocation `fail_at` from now made to throw (none when
// negative), adds the failures that caused to `failed_in`, and returns
// whether `op` threw std::bad_alloc.
template <class Op>
bool throws_bad_alloc(long fail_at, std::uint64_t& failed_in, Op&& op) {
  fail_in = fail_at;
  const std::uint64_t failed_before = failed;
  bool threw = false;
  try {
    op();
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  fail_in = -1;
  failed_in += failed - failed_before;
  return threw;
}

struct Totals {
  std::uint64_t push_throws = 0;
  std::uint64_t pop_throws = 0;
  std::uint64_t failed_in_push = 0;  // allocations made to fail inside push()
  std::uint64_t failed_in_pop = 0;
  std::uint64_t calendar_ops = 0;
  std::uint64_t ops = 0;
};

// One stream on a fresh queue (its buffers grow from nothing, so growths
// happen inside push() and pop() often). `pop_arm`/`push_arm`: chance that a
// pop/push runs with a failure armed at one of its first allocations.
void run_stream(std::uint64_t seed, long ops, double pop_arm, double push_arm, Totals& totals) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return std::uniform_real_distribution<>(0, 1)(rng); };
  seer::SerialEventQueue queue;
  Reference reference;
  std::vector<std::uint64_t> next_seq(3, 0);
  double now = 0.0;
  // Pending events aimed at: grows in phases so that buckets of new sizes
  // load (the run and the gather buffer grow inside pop) and the ring grows.
  const double targets[] = {300, 3000, 600, 12000, 1500};
  for (long op = 0; op < ops; ++op) {
    const double target = targets[(op * 5 / ops) % 5];
    const double fill = static_cast<double>(reference.size()) / target;
    const bool push = reference.empty() || uniform() < (fill < 1.0 ? 0.7 : 0.35);
    const bool arm = uniform() < (push ? push_arm : pop_arm);
    if (push) {
      seer::Event e;
      e.source = static_cast<seer::EntityId>(rng() % 3);
      e.seq = next_seq[e.source]++;
      // Delays on a coarse grid now and then: buckets of many equal times.
      double delay = std::exponential_distribution<>(1.0)(rng) * (op % 7000 < 3500 ? 1.0 : 0.01);
      if (seed % 2 == 0) delay = std::round(delay * 8) / 8;
      e.time = uniform() < 0.05 ? now : now + delay;
      e.target = static_cast<seer::EntityId>(rng() % 100);
      std::memcpy(e.payload, &op, sizeof op);
      const long fail_at = arm ? static_cast<long>(rng() % 4) : -1;
      if (throws_bad_alloc(fail_at, totals.failed_in_push, [&] { queue.push(e); })) {
        ++totals.push_throws;
        CHECK(queue.size() == reference.size(),
              queue_check::at("a push that threw queued nothing", seed, op));
      } else {
        reference.push(e);
      }
    } else {
      const seer::Event want = reference.top();
      const long fail_at = arm ? static_cast<long>(rng() % 2) : -1;
      seer::Event got;
      if (throws_bad_alloc(fail_at, totals.failed_in_pop, [&] { got = queue.pop(); })) {
        ++totals.pop_throws;
        CHECK(queue.size() == reference.size(),
              queue_check::at("a pop that threw removed nothing", seed, op));
      } else {
        CHECK(same_event(got, want), queue_check::at("pop order", seed, op));
        reference.pop();
        if (want.time > now) now = want.time;
      }
    }
    CHECK(queue.size() == reference.size(), queue_check::at("size", seed, op));
    if (!reference.empty()) {
      CHECK(queue.top_time() == reference.top().time, queue_check::at("top_time", seed, op));
      CHECK(same_event(queue.top(), reference.top()), queue_check::at("top", seed, op));
    }
    if (queue.calendar_stats().in_use) ++totals.calendar_ops;
    ++totals.ops;
    if (check::failures > 0) return;  // a broken queue: later operations may crash
  }
  while (!reference.empty()) {
    CHECK(same_event(queue.pop(), reference.top()), queue_check::at("drain order", seed, ops));
    reference.pop();
  }
  CHECK(queue.empty(), queue_check::at("drained", seed, ops));
}

}  // namespace

int main() {
  check::stop_after = 20;  // a broken queue fails every later operation
  Totals totals;
  // Many short streams: each fresh queue grows its buffers from nothing.
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    const double pop_arm = seed % 3 == 0 ? 1.0 : 0.25;
    const double push_arm = seed % 4 == 0 ? 0.0 : 0.05;
    run_stream(seed, 20000, pop_arm, push_arm, totals);
    if (check::failures > 0) break;
  }
  std::printf("allocations made to fail: %llu in push, %llu in pop; %llu pushes and %llu pops "
              "threw; calendar in use for %.0f%% of operations\n",
              static_cast<unsigned long long>(totals.failed_in_push),
              static_cast<unsigned long long>(totals.failed_in_pop),
              static_cast<unsigned long long>(totals.push_throws),
              static_cast<unsigned long long>(totals.pop_throws),
              100.0 * static_cast<double>(totals.calendar_ops) / static_cast<double>(totals.ops));
  CHECK(totals.failed_in_push > 40, "allocations in push were made to fail");
  CHECK(totals.failed_in_pop > 40, "allocations in pop were made to fail");
  CHECK(totals.calendar_ops * 3 > totals.ops, "the calendar was in use often");
  return check::report("test_serial_event_queue_bad_alloc");
}
