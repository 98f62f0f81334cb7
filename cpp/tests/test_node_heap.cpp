// NodeHeap (the parallel executor's per-entity queue) against the contract's
// order: every pop, top() and size() compared with a std::priority_queue of
// the same events (time, then source, then seq), on random streams whose
// pending count wanders across the sorted run's limit and back (so the queue
// turns into a heap and into a run again, many times), with ties on time and
// on (time, source), pushes earlier and later than everything pending, and
// clear() / release_storage() mid-stream. Nodes come from a NodePool; at the
// end every node is back in it, once.
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <unordered_set>
#include <vector>

#include "check.hpp"
#include "node_heap.hpp"
#include "node_pool.hpp"
#include "queue_check.hpp"

namespace {


struct Counts {
  long pushes = 0, pops = 0, to_heap = 0, to_run = 0;
};

// One stream: `ops` operations; the pending count drifts towards `target`,
// which jumps now and then between a few events and a few hundred.
Counts run_stream(std::uint64_t seed, long ops, seer::NodePool& pool) {
  std::mt19937_64 rng(seed);
  seer::NodeHeap heap;
  queue_check::Reference reference;
  std::uint32_t next_seq[4] = {0, 0, 0, 0};
  double now = 0.0;
  std::size_t target = 4;
  Counts counts;
  bool was_heap = false;
  for (long op = 0; op < ops; ++op) {
    if (rng() % 500 == 0) target = std::size_t{1} << (rng() % 9);  // 1 .. 256
    if (rng() % 4000 == 0) {
      heap.clear(pool);
      reference = {};
      if (rng() % 2 == 0) heap.release_storage();
      was_heap = false;
      continue;
    }
    const bool push = heap.size() < target ? rng() % 4 != 0 : rng() % 4 == 0;
    if (push) {
      seer::Event e;
      const std::uint64_t shape = rng() % 8;
      // Times on a coarse grid (many ties), just after now, or far ahead.
      if (shape < 4) {
        e.time = now + static_cast<double>(rng() % 16) * 0.25;
      } else if (shape < 7) {
        e.time = now + std::uniform_real_distribution<double>(0.0, 10.0)(rng);
      } else {
        e.time = now;  // at the time being handled: before most pending events
      }
      e.source = static_cast<seer::EntityId>(rng() % 4);
      e.seq = next_seq[e.source]++;
      e.target = 1;
      e.kind = static_cast<seer::EventKind>(rng() % 3);
      e.payload[0] = static_cast<unsigned char>(op);
      heap.push(pool.allocate(e));
      reference.push(e);
      ++counts.pushes;
    } else if (!heap.empty()) {
      CHECK(queue_check::same_event(heap.top(), reference.top()), queue_check::at("top", seed, op));
      CHECK(heap.top_time() == reference.top().time, queue_check::at("top_time", seed, op));
      CHECK(heap.top_address() == &heap.top(), queue_check::at("top_address", seed, op));
      seer::EventNode* node = heap.pop();
      CHECK(queue_check::same_event(node->event, reference.top()),
            queue_check::at("pop", seed, op));
      now = node->event.time;
      reference.pop();
      pool.release(node);
      ++counts.pops;
    }
    CHECK(heap.size() == reference.size(), queue_check::at("size", seed, op));
    CHECK(heap.empty() == reference.empty(), queue_check::at("empty", seed, op));
    if (heap.empty()) {
      CHECK(heap.top_time() == std::numeric_limits<double>::infinity(),
            queue_check::at("empty top_time", seed, op));
      CHECK(heap.top_address() == nullptr && heap.front_address() == nullptr,
            queue_check::at("empty addresses", seed, op));
    }
    // Past the run's limit the queue is a heap; at kHeapMin or fewer a run.
    const bool is_heap = heap.size() > seer::NodeHeap::kRunMax ||
                         (was_heap && heap.size() > seer::NodeHeap::kHeapMin);
    if (is_heap && !was_heap) ++counts.to_heap;
    if (!is_heap && was_heap) ++counts.to_run;
    was_heap = is_heap;
  }
  // for_each visits exactly the pending events.
  std::size_t visited = 0;
  heap.for_each([&](const seer::Event&) { ++visited; });
  CHECK(visited == reference.size(), queue_check::at("for_each count", seed, ops));
  while (!heap.empty()) {
    seer::EventNode* node = heap.pop();
    CHECK(queue_check::same_event(node->event, reference.top()),
          queue_check::at("final pop", seed, ops));
    reference.pop();
    pool.release(node);
  }
  CHECK(reference.empty(), queue_check::at("final size", seed, ops));
  return counts;
}

}  // namespace

int main() {
  check::stop_after = 20;  // a broken queue fails every later operation
  seer::NodePool pool;
  Counts total;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Counts c = run_stream(seed, 40000, pool);
    total.pushes += c.pushes;
    total.pops += c.pops;
    total.to_heap += c.to_heap;
    total.to_run += c.to_run;
  }
  // Every node came back, once.
  std::unordered_set<const seer::EventNode*> free_nodes;
  const std::size_t free = pool.free_count();
  for (std::size_t i = 0; i < free; ++i) free_nodes.insert(pool.allocate());
  CHECK(free_nodes.size() == free && free == pool.capacity(), "every node back in the pool");
  // The streams did cross the run's limit both ways.
  CHECK(total.to_heap > 100 && total.to_run > 100, "streams switch between run and heap");
  std::printf("node heap: %ld pushes, %ld pops, %ld switches to a heap, %ld back to a run\n",
              total.pushes, total.pops, total.to_heap, total.to_run);
  return check::report("test_node_heap");
}
