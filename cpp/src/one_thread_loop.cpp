#include "one_thread_loop.hpp"

#include <algorithm>
#include <functional>

#include "platform.hpp"

namespace seer {
namespace {
// The pass over every queue starts loading the queue line of the entity
// this many places ahead, and its heap half as far ahead (as the engine's
// begin read does).
constexpr EntityId kPrefetchQueueAhead = 6;
constexpr EntityId kPrefetchAhead = 2;
// queue_tops_ is a min-heap on time.
constexpr auto kLaterTop = std::greater<std::pair<double, EntityId>>();
}  // namespace

void OneThreadLoop::bind(Dispatcher& dispatcher) {
  dispatcher_ = &dispatcher;
  release_storage();
}

void OneThreadLoop::release_storage() {
  serial_ = std::make_unique<SerialExecutor>();
  serial_->bind(*dispatcher_);
}

void OneThreadLoop::take_from(LocalQueue& q, NodePool& pool, double t_end) {
  while (q.top_time() < t_end) {
    serial_->insert(q.top());  // may throw bad_alloc, before anything moved
    pool.release(q.pop());
  }
  q.publish_top();  // a step in rounds reads only the published top
}

void OneThreadLoop::take_due(ParallelInstance& inst, NodePool& pool, double t_end) {
  if (!queue_tops_valid_) {
    queue_tops_.clear();
    for (EntityId e = 0; e < inst.num_entities; ++e) {
      if (e + kPrefetchQueueAhead < inst.num_entities) inst.prefetch_queue(e + kPrefetchQueueAhead);
      if (e + kPrefetchAhead < inst.num_entities) inst.queues[e + kPrefetchAhead].prefetch_heap();
      LocalQueue& q = inst.queues[e];
      q.drain();  // a step in rounds may have left nodes in the inbox
      take_from(q, pool, t_end);
      if (!q.empty_local()) queue_tops_.emplace_back(q.top_time(), e);
    }
    std::make_heap(queue_tops_.begin(), queue_tops_.end(), kLaterTop);
    queue_tops_valid_ = true;
    return;
  }
  while (!queue_tops_.empty() && queue_tops_.front().first < t_end) {
    std::pop_heap(queue_tops_.begin(), queue_tops_.end(), kLaterTop);
    const EntityId e = queue_tops_.back().second;
    queue_tops_.pop_back();
    LocalQueue& q = inst.queues[e];
    take_from(q, pool, t_end);
    if (!q.empty_local()) {
      queue_tops_.emplace_back(q.top_time(), e);
      std::push_heap(queue_tops_.begin(), queue_tops_.end(), kLaterTop);
    }
  }
}

void OneThreadLoop::run_step(ParallelInstance& inst, NodePool& pool, const StepWindow& window,
                             StepStats& stats) {
  try {
    take_due(inst, pool, window.t_end);
  } catch (...) {
    queue_tops_valid_ = false;  // an entity may have left the heap with events left
    throw;
  }
  serial_->run_step(window, stats);
}

void OneThreadLoop::hand_to_queues(ParallelInstance& inst, NodePool& pool, double t_end) {
  serial_->take_before(t_end, [&](const Event& event) { push_to_queue(inst, pool, event); });
}

void OneThreadLoop::hand_all_to_queues(ParallelInstance& inst, NodePool& pool) {
  serial_->take_all([&](const Event& event) { push_to_queue(inst, pool, event); },
                    platform::discard_pages);
}

void OneThreadLoop::push_to_queue(ParallelInstance& inst, NodePool& pool, const Event& event) {
  LocalQueue& q = inst.queues[event.target];
  q.push_local(event, pool);  // may throw bad_alloc: the event stays in the calendar
  q.publish_top();
}

}  // namespace seer
