// EventHeap against a sorted reference: every pop, lazy or not, must return
// the smallest pending event in key order (time, source, seq), with ties in
// time and in (time, source), -0.0 beside +0.0, and growth mid-run.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "seer/event_heap.hpp"

namespace {

int failures = 0;

void fail(const std::string& what) {
  if (++failures <= 20) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

bool same_event(const seer::Event& a, const seer::Event& b) {
  return a.time == b.time && a.source == b.source && a.seq == b.seq && a.target == b.target;
}

// A reference multiset: a vector kept unsorted, min found by scan.
struct Reference {
  std::vector<seer::Event> events;
  seer::Event pop() {
    auto it = std::min_element(events.begin(), events.end(), seer::key_less);
    const seer::Event e = *it;
    events.erase(it);
    return e;
  }
};

// Random runs: each step pops one event (lazily or not) and pushes 0-3
// events no earlier than it, like a handler; times come from a coarse grid
// so that ties in time and in (time, source) are common.
void random_run(std::uint64_t seed, bool lazy, int grid) {
  std::mt19937_64 rng(seed);
  seer::EventHeap heap;
  Reference ref;
  std::vector<std::uint64_t> next_seq(8, 0);
  auto make = [&](double now) {
    seer::Event e;
    e.source = static_cast<seer::EntityId>(rng() % next_seq.size());
    e.target = static_cast<seer::EntityId>(rng() % next_seq.size());
    e.seq = next_seq[e.source]++;
    e.time = now + static_cast<double>(rng() % grid) / 4.0;
    return e;
  };
  for (int i = 0; i < 20; ++i) {
    const seer::Event e = make(0.0);
    heap.push(e);
    ref.events.push_back(e);
  }
  for (int step = 0; step < 4000 && !ref.events.empty(); ++step) {
    if (heap.size() != ref.events.size()) fail("size " + std::to_string(heap.size()));
    const seer::Event want = ref.pop();
    if (heap.top_time() != want.time) fail("top_time at step " + std::to_string(step));
    const seer::Event got = lazy ? heap.pop_lazy() : heap.pop();
    if (!same_event(got, want)) {
      fail("seed " + std::to_string(seed) + " step " + std::to_string(step) + ": popped (" +
           std::to_string(got.time) + ", " + std::to_string(got.source) + ", " +
           std::to_string(got.seq) + "), want (" + std::to_string(want.time) + ", " +
           std::to_string(want.source) + ", " + std::to_string(want.seq) + ")");
      return;
    }
    // Fewer pushes late in the run, so that the heap also drains.
    const int pushes = static_cast<int>(rng() % (step < 3000 ? 4 : 2));
    for (int k = 0; k < pushes; ++k) {
      const seer::Event e = make(got.time);
      heap.push(e);
      ref.events.push_back(e);
    }
    if (lazy) heap.settle();
  }
  std::size_t visited = 0;
  heap.for_each([&](const seer::Event&) { ++visited; });
  if (visited != ref.events.size()) fail("for_each visited " + std::to_string(visited));
}

void signed_zero_and_negative() {
  seer::EventHeap heap;
  seer::Event a, b, c, d;
  a.time = 0.0, a.source = 2;
  b.time = -0.0, b.source = 1;  // equal to 0.0: the source decides
  c.time = -1.5, c.source = 3;
  d.time = 1e300, d.source = 0;
  for (const auto& e : {a, b, c, d}) heap.push(e);
  if (heap.pop().source != 3) fail("-1.5 first");
  if (heap.pop().source != 1) fail("-0.0 and 0.0 tie: source 1 before source 2");
  if (heap.pop().source != 2) fail("0.0 third");
  if (heap.top_time() != 1e300) fail("top_time 1e300");
  if (heap.pop().source != 0) fail("1e300 last");
  if (!heap.empty() || heap.top_time() != std::numeric_limits<double>::infinity()) {
    fail("empty heap");
  }
}

// A lazy pop with no push, and settle() on the last event.
void lazy_without_push() {
  seer::EventHeap heap;
  for (int i = 0; i < 5; ++i) {
    seer::Event e;
    e.time = 5.0 - i;
    e.seq = static_cast<std::uint64_t>(i);
    heap.push(e);
  }
  for (int i = 0; i < 5; ++i) {
    const seer::Event e = heap.pop_lazy();
    heap.settle();
    if (e.time != 1.0 + i) fail("lazy pop without push, " + std::to_string(i));
  }
  if (!heap.empty()) fail("lazy pops emptied the heap");
}

}  // namespace

int main() {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    random_run(seed, seed % 2 == 0, seed % 3 == 0 ? 2 : 64);
  }
  signed_zero_and_negative();
  lazy_without_push();
  if (failures != 0) {
    std::fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  std::printf("test_event_heap: ok\n");
  return 0;
}
