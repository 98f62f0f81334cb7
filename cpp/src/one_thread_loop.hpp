// The parallel executor's steps on one thread, and the pending events they
// hold: a SerialExecutor of its own (its loop and its calendar queue, the
// oracle's code itself), beside the per-entity queues that steps in rounds use.
//
// A pending event sits in exactly one of the two: the calendar or its
// target's queue. Each step moves the events it is about to handle:
//   * a one-thread step (run_step) first moves the queues' events below
//     t_end into the calendar, then runs the serial executor's step there
//     (on_step_begin, on_action, every event below t_end in key order); what
//     the handlers schedule goes into the calendar;
//   * before a step in rounds (hand_to_queues) the calendar's events below
//     t_end move into their targets' queues; what the rounds schedule goes
//     into the queues.
// So a step handles exactly the events the serial executor handles, in its
// order, and the bytes are the serial executor's. Events at or after t_end
// stay where they are until a step needs them, so a probe costs about what
// its own events cost. The rest moves in bulk only where leaving it would
// hold two full layouts for long (ParallelExecutor: the first serial-loop
// step after rounds takes the queues' events block by block; the second
// step in rounds in a row, the calendar's, slab page by slab page), each
// old home given back as the new one fills.
//
// Finding the queues' due events without reading every queue each step:
// `queue_tops_` holds the entities whose queue holds events, by earliest
// event (a min-heap). It is built by one pass over the queues (the first
// one-thread step after the queues changed: a step in rounds, an insert)
// and stays exact while only one-thread steps run, because those only take
// events out of the queues.
// Not thread-safe: the caller's thread, between parallel regions.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "executor.hpp"
#include "node_pool.hpp"
#include "parallel_instance.hpp"
#include "serial_executor.hpp"

namespace seer {

class OneThreadLoop final {
 public:
  // The model the calendar's events are handled by (ParallelExecutor::bind).
  void bind(Dispatcher& dispatcher);
  // One step of `inst` on the calling thread (no parallel region running);
  // the nodes of the events it takes from the queues go back to `pool`.
  // Throws what the serial executor throws; what is not handled stays
  // pending (in the calendar or the queues).
  void run_step(ParallelInstance& inst, NodePool& pool, const StepWindow& window,
                StepStats& stats);
  // on_init of every entity, in id order; its events into the calendar.
  void initialize() { serial_->initialize(); }
  // Adds a pending event to the calendar.
  void insert(const Event& event) { serial_->insert(event); }
  // Room in the calendar for `n` more events (before a bulk insert).
  void reserve(std::size_t n) { serial_->reserve(n); }
  // Before a step in rounds: the calendar's events below `t_end` move into
  // their targets' queues (nodes from `pool`), whose published tops follow.
  void hand_to_queues(ParallelInstance& inst, NodePool& pool, double t_end);
  // Every event of the calendar moves into its target's queue, in no
  // particular order (a queue orders its own), the calendar's pages given
  // back as it empties: no moment with two full layouts. If a push throws,
  // the events not moved stay in the calendar.
  void hand_all_to_queues(ParallelInstance& inst, NodePool& pool);
  // Something other than this loop changed the queues (a step in rounds, an
  // insert): the next one-thread step reads every queue once.
  void queues_changed() { queue_tops_valid_ = false; }
  // Every event of the queues moved into the calendar some other way
  // (ParallelEngine::move_out_events): they are known to be empty.
  void queues_emptied() {
    queue_tops_.clear();
    queue_tops_valid_ = true;
  }
  // Whether the queues are known to hold no event (after a one-thread step).
  bool queues_empty() const { return queue_tops_valid_ && queue_tops_.empty(); }

  // The calendar's events.
  std::size_t size() const { return serial_->pending_count(); }
  void collect_pending(std::vector<Event>& out) const { serial_->collect_pending(out); }
  void pending_in_place(std::vector<const Event*>& out) const { serial_->pending_in_place(out); }
  // Drops the calendar's events (keeps its buffers and what it knows of the queues' tops).
  void clear() { serial_->clear(); }
  // Frees the calendar's buffers; empty calendar only.
  void release_storage();

 private:
  // The queues' events below `t_end` into the calendar.
  void take_due(ParallelInstance& inst, NodePool& pool, double t_end);
  // Moves entity e's events below `t_end` into the calendar; publishes its top.
  void take_from(LocalQueue& q, NodePool& pool, double t_end);
  // One calendar event into its target's queue; publishes its top.
  void push_to_queue(ParallelInstance& inst, NodePool& pool, const Event& event);

  Dispatcher* dispatcher_ = nullptr;
  std::unique_ptr<SerialExecutor> serial_;  // the calendar and its loop
  // (earliest event time, entity) of every entity whose queue holds events,
  // a min-heap on time; exact while queue_tops_valid_.
  std::vector<std::pair<double, EntityId>> queue_tops_;
  bool queue_tops_valid_ = false;
};

}  // namespace seer
