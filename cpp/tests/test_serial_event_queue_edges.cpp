// SerialEventQueue's calendar at the edges of floating point, against
// std::priority_queue with the contract's comparator (EventAfter: time, then
// source, then seq).
//
// test_serial_event_queue_calendar.cpp shapes streams like simulations; these
// aim at the bucket index x = (t - origin) / width itself:
//   * ulp-spaced times: delays counted in ulps around 2^52, across 2^53
//     (where the ulp doubles), near -2^53, 1.0 and 1.7e307, so that a bucket
//     is a few ulps wide and bucket edges fall between neighbouring doubles;
//   * extremes: finite times whose (t - origin) overflows to +inf (+-1.7e308),
//     +-inf, -0.0 and the smallest subnormal mixed into calendar traffic;
//   * a far cluster: a third of the pushes land 1e9 ahead on a few integer
//     times (ties), so the far list fills, the ring runs empty and the
//     calendar jumps to the far events and migrates them.
// Every pop, top(), top_time() and size() must match the reference, payload
// bytes included; each shape must keep the calendar in use.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <queue>
#include <random>
#include <vector>

#include "check.hpp"
#include "queue_check.hpp"
#include "seer/event.hpp"
#include "serial_event_queue.hpp"

namespace {

using queue_check::Reference;
using queue_check::same_event;

constexpr double kInf = std::numeric_limits<double>::infinity();

// t moved by k ulps (k < 0: down), for t and the result of one sign and
// finite: the bits of doubles of one sign count ulps.
double ulps(double t, long k) {
  std::int64_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  bits += t < 0 ? -k : k;
  std::memcpy(&t, &bits, sizeof t);
  return t;
}

enum Shape { kUlps = 0, kExtremes = 1, kFarCluster = 2 };

// One stream; returns the share of operations that found the calendar in use.
double run_stream(Shape shape, std::uint64_t seed, long ops) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return std::uniform_real_distribution<>(0, 1)(rng); };
  const double ulp_bases[] = {4503599627370496.0, 9007199254740992.0 - 48, -9007199254740992.0,
                              1.0, 1.7e307};
  double now = shape == kUlps ? ulp_bases[seed % 5] : 0.0;
  const int sources = 1 + static_cast<int>(seed % 3);
  std::vector<std::uint64_t> next_seq(sources, 0);
  seer::SerialEventQueue queue;
  Reference reference;
  long calendar_ops = 0;
  for (long op = 0; op < ops; ++op) {
    const double fill = static_cast<double>(reference.size()) / 800.0;
    if (reference.empty() || uniform() < (fill < 0.5 ? 0.8 : fill > 1.5 ? 0.3 : 0.5)) {
      seer::Event e;
      e.source = static_cast<seer::EntityId>(rng() % sources);
      e.seq = next_seq[e.source]++;
      const double u = uniform();
      const double delay = std::exponential_distribution<>(1.0)(rng);
      switch (shape) {
        case kUlps:  // ~1000 ulps ahead (~5 ulps a bucket), or 0-2 ulps back
          e.time = ulps(now, u < 0.1 ? -static_cast<long>(rng() % 3)
                                     : static_cast<long>(std::round(delay * 1000)));
          break;
        case kExtremes:
          if (u < 0.01) {
            e.time = 1.7e308;
          } else if (u < 0.02) {
            e.time = -1.7e308;
          } else if (u < 0.025) {
            e.time = kInf;
          } else if (u < 0.03) {
            e.time = -kInf;
          } else if (u < 0.04) {
            e.time = -0.0;
          } else if (u < 0.05) {
            e.time = 5e-324;
          } else {
            e.time = now + delay;
          }
          break;
        case kFarCluster:
          e.time = u < 0.3 ? now + 1e9 + std::floor(uniform() * 8) : now + delay;
          break;
      }
      e.target = static_cast<seer::EntityId>(rng() % 100);
      std::memcpy(e.payload, &op, sizeof op);
      queue.push(e);
      reference.push(e);
    } else {
      const seer::Event want = reference.top();
      CHECK(queue.top_time() == want.time, queue_check::at("top_time", seed, op, shape));
      CHECK(same_event(queue.top(), want), queue_check::at("top", seed, op, shape));
      CHECK(same_event(queue.pop(), want), queue_check::at("pop order", seed, op, shape));
      reference.pop();
      if (std::isfinite(want.time) && want.time > now) now = want.time;
    }
    CHECK(queue.size() == reference.size(), queue_check::at("size", seed, op, shape));
    if (queue.calendar_stats().in_use) ++calendar_ops;
  }
  while (!reference.empty()) {
    CHECK(same_event(queue.pop(), reference.top()),
          queue_check::at("drain order", seed, ops, shape));
    reference.pop();
  }
  CHECK(queue.empty(), queue_check::at("drained", seed, ops, shape));
  return static_cast<double>(calendar_ops) / static_cast<double>(ops);
}

}  // namespace

int main() {
  check::stop_after = 20;  // a broken queue fails every later operation
  const char* names[] = {"ulp-spaced", "extremes", "far cluster"};
  for (const Shape shape : {kUlps, kExtremes, kFarCluster}) {
    double share = 0.0;
    const int streams = 10;
    for (std::uint64_t seed = 1; seed <= streams; ++seed) share += run_stream(shape, seed, 20000);
    share /= streams;
    std::printf("%s: calendar in use for %.0f%% of operations\n", names[shape], 100.0 * share);
    CHECK(share > 0.5, queue_check::at("the calendar was in use for most operations", 0, 0, shape));
  }
  return check::report("test_serial_event_queue_edges");
}
