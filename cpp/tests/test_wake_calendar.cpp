// WakeCalendar: pop_before(h) hands out exactly the entries below h, each
// once, whatever the bucket they fell in (checked against a plain list of
// entries over random times, horizons and bucket counts); earliest() is the
// smallest entry left; times at or after t_end are dropped; start() empties
// it for the next step, keeping no entry of the last one.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "wake_calendar.hpp"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One step of random adds and rounds against a reference list.
void check_against_reference(std::uint64_t seed, double t_begin, double t_end, double lookahead) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  seer::WakeCalendar calendar;
  calendar.start(t_begin, t_end, lookahead);
  std::vector<std::pair<double, seer::EntityId>> reference;
  const std::string where = "seed " + std::to_string(seed) + ": ";
  auto add = [&](double time, seer::EntityId id) {
    calendar.add(time, id);
    if (time < t_end) reference.emplace_back(time, id);
  };
  const double span = t_end - t_begin;
  for (seer::EntityId id = 0; id < 50; ++id) add(t_begin + unit(rng) * span * 1.1, id);
  double horizon = t_begin;
  while (!reference.empty()) {
    // As in the engine: the next horizon is the earliest entry plus at most
    // one lookahead, and what a round adds is at or after its horizon.
    const double lb = calendar.earliest();
    double expected_lb = kInf;
    for (const auto& entry : reference) expected_lb = std::min(expected_lb, entry.first);
    if (lb != expected_lb) FAIL(where + "earliest() " + std::to_string(lb));
    horizon = std::min(std::max(lb + lookahead * unit(rng), std::nextafter(lb, kInf)), t_end);
    std::vector<seer::EntityId> popped;
    calendar.pop_before(horizon, [&](seer::EntityId id) { popped.push_back(id); });
    std::vector<seer::EntityId> expected;
    std::vector<std::pair<double, seer::EntityId>> kept;
    for (const auto& entry : reference) {
      if (entry.first < horizon) {
        expected.push_back(entry.second);
      } else {
        kept.push_back(entry);
      }
    }
    reference = kept;
    std::sort(popped.begin(), popped.end());
    std::sort(expected.begin(), expected.end());
    if (popped != expected) {
      FAIL(where + "pop_before(" + std::to_string(horizon) + ") handed out " +
           std::to_string(popped.size()) + " entries, expected " + std::to_string(expected.size()));
    }
    for (seer::EntityId id : popped) {
      if (unit(rng) < 0.7) add(horizon + unit(rng) * lookahead * 3, id);
    }
    if (horizon >= t_end) break;
  }
  calendar.pop_before(t_end, [&](seer::EntityId) {});
  if (calendar.earliest() != kInf) FAIL(where + "entries left after the last round");
}

void test_step_boundaries() {
  seer::WakeCalendar calendar;
  calendar.start(10.0, 20.0, 1.0);
  calendar.add(20.0, 1);  // at t_end: the next step's begin read finds it
  calendar.add(kInf, 2);
  if (calendar.earliest() != kInf) FAIL("times at or after t_end were kept");
  calendar.add(15.0, 3);
  calendar.add(10.0, 4);
  if (calendar.earliest() != 10.0) FAIL("earliest() at t_begin");
  std::vector<seer::EntityId> popped;
  calendar.pop_before(10.5, [&](seer::EntityId id) { popped.push_back(id); });
  if (popped != std::vector<seer::EntityId>{4}) FAIL("pop_before(10.5)");
  calendar.start(20.0, 30.0, 1.0);  // the next step: nothing of the last one
  if (calendar.earliest() != kInf) FAIL("start() kept an entry");
  calendar.pop_before(30.0, [&](seer::EntityId) { FAIL("start() kept an entry to pop"); });
}

}  // namespace

int main() {
  test_step_boundaries();
  std::uint64_t seed = 1;
  // Bucket widths of one lookahead, a lookahead of 0 (one bucket), a span
  // of more lookaheads than kMaxBuckets (wider buckets), a lookahead wider
  // than the step (one bucket).
  struct Step {
    double t_begin, t_end, lookahead;
  };
  const Step steps[] = {
      {0.0, 60.0, 1.0}, {3600.0, 7200.0, 60.0}, {5.0, 6.0, 0.0}, {0.0, 1e6, 1.0}, {0.0, 10.0, 100.0}};
  for (const Step& step : steps) {
    for (int repeat = 0; repeat < 40; ++repeat) {
      check_against_reference(seed++, step.t_begin, step.t_end, step.lookahead);
    }
  }
  return check::report("test_wake_calendar");
}
