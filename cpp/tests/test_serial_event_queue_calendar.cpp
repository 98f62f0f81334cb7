// Property test of SerialEventQueue's calendar (time buckets in front of the
// heap) against std::priority_queue with the contract's comparator
// (EventAfter: time, then source, then seq).
//
// test_serial_event_queue.cpp draws times from a handful of values; these
// streams are shaped like simulations instead, so that the queue leaves its
// heap-only start and runs on buckets: pops advance a clock and pushes land
// ahead of it (a lookahead plus a random delay), over thousands of pending
// events. Each stream mixes in what could break the buckets' order:
//   * ties: delays rounded to a grid (many equal times), few sources, seqs
//     pushed out of order, and seqs past 2^32 - 1 (wide_seq_);
//   * pushes into the bucket being drained, at the clock itself, and below
//     it (a push in the past; the runtime never does it, insert() may);
//   * density swings of 1000x (the width must rebuild), huge gaps (1e6,
//     1e300, +inf: the ring runs empty and restarts past them), negative,
//     -0.0 and subnormal times;
//   * clear() mid-stream and drains to empty and back.
// Every pop, top(), top_time() and size() must match the reference, payload
// bytes included, and the pending multiset (for_each) now and then. The
// streams must actually use the calendar (checked through calendar_stats()).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

#include "check.hpp"
#include "queue_check.hpp"
#include "seer/event.hpp"
#include "serial_event_queue.hpp"

namespace {

using queue_check::Reference;
using queue_check::same_event;
using KeyTuple = std::tuple<double, seer::EntityId, std::uint64_t>;

KeyTuple key(const seer::Event& e) { return {e.time + 0.0, e.source, e.seq}; }

struct Shape {
  long ops;
  int sources;           // 1..sources
  double grid;           // delays rounded to multiples of this (0: none)
  double lookahead;      // added to every delay
  double mean_delay;     // exponential delay mean, before density swings
  bool swings;           // density 1000x up and down in phases
  bool oddities;         // gaps, +inf, past and negative times, -0.0, subnormals
  bool wide;             // some sources' seqs start just below 2^32 - 1
  double target_size;    // pending events aimed at
};

struct Counts {
  std::uint64_t calendar_ops = 0;  // operations that found the calendar in use
  std::uint64_t rebuilds = 0;
};

class Stream {
 public:
  Stream(std::uint64_t seed, const Shape& shape) : seed_(seed), shape_(shape), rng_(seed) {
    next_seq_.resize(shape.sources);
    for (int s = 0; s < shape.sources; ++s) {
      next_seq_[s] = (shape.wide && s % 2 == 0) ? (1ULL << 32) - 3 - s : 0;
    }
  }

  Counts run() {
    Counts counts;
    for (long op = 0; op < shape_.ops; ++op) {
      const double fill = static_cast<double>(reference_.size()) / shape_.target_size;
      const double push_share = fill < 0.5 ? 0.8 : fill > 1.5 ? 0.3 : 0.5;
      if (reference_.empty() || uniform() < push_share) {
        push_batch(op);
      } else {
        pop_one(op);
      }
      if (shape_.oddities && op % 20011 == 20000) {
        drain(op);  // to empty, then the stream goes on from there
      }
      if (shape_.oddities && op == shape_.ops / 2) {
        queue_.clear();
        reference_ = Reference();
        CHECK(queue_.empty() && queue_.size() == 0, queue_check::at("clear", seed_, op));
      }
      CHECK(queue_.size() == reference_.size(), queue_check::at("size", seed_, op));
      if (op % 4999 == 0) check_pending(op);
      if (queue_.calendar_stats().in_use) ++counts.calendar_ops;
    }
    drain(shape_.ops);
    counts.rebuilds = queue_.calendar_stats().rebuilds;
    return counts;
  }

 private:
  double uniform() { return std::uniform_real_distribution<>(0, 1)(rng_); }

  double phase_scale(long op) const {
    if (!shape_.swings) return 1.0;
    switch ((op / 15000) % 4) {
      case 1: return 1e-3;  // 1000x denser
      case 3: return 30.0;  // sparser
      default: return 1.0;
    }
  }

  double next_time(long op) {
    const double u = uniform();
    if (shape_.oddities) {
      if (u < 0.002) return now_ + 1e6 * (1 + uniform());
      if (u < 0.003) return 1e300;
      if (u < 0.004) return std::numeric_limits<double>::infinity();
      if (u < 0.010) return now_ - 10 * uniform();  // in the past
      if (u < 0.012) return -0.0;
      if (u < 0.014) return 5e-324 * static_cast<double>(rng_() % 4);
      if (u < 0.020) return -1e6 * uniform();
      if (u < 0.060) return now_;  // at the clock: the bucket being drained
    }
    double delay = shape_.lookahead +
                   std::exponential_distribution<>(1.0 / shape_.mean_delay)(rng_) * phase_scale(op);
    if (shape_.grid > 0) delay = std::round(delay / shape_.grid) * shape_.grid;
    return now_ + delay;
  }

  // A few events at once, pushed in shuffled order: seq order and push order
  // disagree, so (time, source) ties are decided by seq.
  void push_batch(long op) {
    const int n = 1 + static_cast<int>(rng_() % 4);
    std::vector<seer::Event> batch;
    const double shared = next_time(op);  // half the batch shares one time
    for (int i = 0; i < n; ++i) {
      seer::Event e;
      e.source = static_cast<seer::EntityId>(rng_() % shape_.sources);
      e.seq = next_seq_[e.source]++;
      e.time = i % 2 == 0 ? shared : next_time(op);
      e.target = static_cast<seer::EntityId>(rng_() % 1000);
      e.kind = static_cast<seer::EventKind>(rng_() % 3);
      const std::uint64_t word = rng_();
      std::memcpy(e.payload, &word, sizeof word);
      std::memcpy(e.payload + 56, &op, sizeof op);
      batch.push_back(e);
    }
    std::shuffle(batch.begin(), batch.end(), rng_);
    for (const seer::Event& e : batch) {
      queue_.push(e);
      reference_.push(e);
    }
  }

  void pop_one(long op) {
    const seer::Event& want = reference_.top();
    CHECK(queue_.top_time() == want.time, queue_check::at("top_time", seed_, op));
    CHECK(same_event(queue_.top(), want), queue_check::at("top", seed_, op));
    const seer::Event got = queue_.pop();
    CHECK(same_event(got, want), queue_check::at("pop order", seed_, op));
    if (std::isfinite(want.time) && want.time > now_) now_ = want.time;
    reference_.pop();
  }

  void drain(long op) {
    while (!reference_.empty()) {
      CHECK(!queue_.empty(), queue_check::at("drain: queue empty early", seed_, op));
      if (queue_.empty()) return;
      pop_one(op);
    }
    CHECK(queue_.empty() && std::isinf(queue_.top_time()), queue_check::at("drained", seed_, op));
    now_ = std::isfinite(now_) && now_ < 1e12 ? now_ : 0.0;
  }

  void check_pending(long op) {
    std::vector<KeyTuple> mine, theirs;
    queue_.for_each([&](const seer::Event& e) { mine.push_back(key(e)); });
    Reference copy = reference_;
    for (; !copy.empty(); copy.pop()) theirs.push_back(key(copy.top()));
    std::sort(mine.begin(), mine.end());
    std::sort(theirs.begin(), theirs.end());
    CHECK(mine == theirs, queue_check::at("for_each visits the pending events", seed_, op));
  }

  std::uint64_t seed_;
  Shape shape_;
  std::mt19937_64 rng_;
  std::vector<std::uint64_t> next_seq_;
  double now_ = 0.0;
  seer::SerialEventQueue queue_;
  Reference reference_;
};

void test_streams() {
  std::uint64_t calendar_ops = 0, ops = 0, rebuilds = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    Shape shape;
    shape.ops = 60000;
    shape.sources = 1 + static_cast<int>(seed % 4);
    shape.grid = seed % 3 == 0 ? 0.0 : (seed % 3 == 1 ? 0.125 : 1.0);
    shape.lookahead = seed % 2 == 0 ? 0.0 : 0.5;
    shape.mean_delay = seed % 5 == 0 ? 0.01 : 2.0;
    shape.swings = seed % 4 < 2;
    shape.oddities = seed % 3 != 2;
    shape.wide = seed % 2 == 1;
    shape.target_size = seed % 6 == 0 ? 20000.0 : (seed % 6 == 1 ? 100.0 : 2000.0);
    const Counts counts = Stream(seed, shape).run();
    calendar_ops += counts.calendar_ops;
    ops += static_cast<std::uint64_t>(shape.ops);
    rebuilds += counts.rebuilds;
  }
  // The streams exercised the calendar, not only the heap it falls back on.
  std::printf("calendar in use for %.0f%% of operations, %llu rebuilds\n",
              100.0 * static_cast<double>(calendar_ops) / static_cast<double>(ops),
              static_cast<unsigned long long>(rebuilds));
  CHECK(calendar_ops * 2 > ops, "the calendar was in use for most operations");
  CHECK(rebuilds > 100, "the calendar rebuilt often");
}

// Equal times only: no width fits, the heap serves alone and stays exact.
void test_one_time() {
  seer::SerialEventQueue queue;
  Reference reference;
  for (int i = 0; i < 5000; ++i) {
    seer::Event e;
    e.time = 7.0;
    e.source = static_cast<seer::EntityId>((i * 7919) % 5);
    e.seq = static_cast<std::uint64_t>((i * 104729) % 5003);
    e.target = static_cast<seer::EntityId>(i);
    queue.push(e);
    reference.push(e);
  }
  while (!reference.empty()) {
    CHECK(same_event(queue.pop(), reference.top()), "one time: order");
    reference.pop();
  }
}

// A NaN time (Context refuses them; insert() does not check) makes the queue
// heap-only, which orders it by its bits as before: +NaN after everything,
// -NaN before everything. The other events keep their order.
void test_nan_times() {
  for (const double nan : {std::numeric_limits<double>::quiet_NaN(),
                           -std::numeric_limits<double>::quiet_NaN()}) {
    seer::SerialEventQueue queue;
    Reference reference;
    std::mt19937_64 rng(5);
    for (int i = 0; i < 3000; ++i) {
      seer::Event e;
      e.time = std::exponential_distribution<>(1.0)(rng) * 100;
      e.source = static_cast<seer::EntityId>(i % 3);
      e.seq = static_cast<std::uint64_t>(i);
      queue.push(e);
      reference.push(e);
    }
    for (int i = 0; i < 500; ++i) {  // the calendar is in use by now
      CHECK(same_event(queue.pop(), reference.top()), queue_check::at("nan: order before", 0, i));
      reference.pop();
    }
    CHECK(queue.calendar_stats().in_use, "nan: calendar in use before");
    seer::Event odd;
    odd.time = nan;
    odd.source = 9;
    queue.push(odd);
    CHECK(!queue.calendar_stats().in_use, "nan: heap only after");
    CHECK(queue.size() == reference.size() + 1, "nan: size");
    const bool first = std::signbit(nan);
    if (first) CHECK(same_event(queue.pop(), odd), "nan: -NaN first");
    while (!reference.empty()) {
      CHECK(same_event(queue.pop(), reference.top()), "nan: order after");
      reference.pop();
    }
    if (!first) CHECK(same_event(queue.pop(), odd), "nan: +NaN last");
    CHECK(queue.empty(), "nan: drained");
  }
}

}  // namespace

int main() {
  check::stop_after = 20;  // a broken queue fails every later operation
  test_streams();
  test_one_time();
  test_nan_times();
  return check::report("test_serial_event_queue_calendar");
}
