#include "parallel_executor.hpp"

#include "platform.hpp"

namespace seer {

ParallelExecutor::ParallelExecutor(unsigned num_threads)
    : ParallelExecutor(std::make_shared<ParallelEngine>(num_threads)) {}

ParallelExecutor::ParallelExecutor(std::shared_ptr<ParallelEngine> engine)
    : engine_(std::move(engine)) {}

// The pending events' nodes stay in the engine's pool blocks, out of the free
// lists: the engine goes with this executor, except in a ParallelBatchRunner,
// which keeps its members for its whole life. Not walking the queues here
// also keeps the destructor safe for an executor torn by fork() mid-step.
ParallelExecutor::~ParallelExecutor() = default;

void ParallelExecutor::bind(Dispatcher& dispatcher) {
  instance_.bind(dispatcher);
  serial_ = std::make_unique<SerialExecutor>();
  serial_->bind(dispatcher);
  // Nothing is pending yet: start in the layout the next step will use.
  serial_layout_ = engine_->next_threads() == 1;
}

std::string ParallelExecutor::thread_decision() const {
  if (engine_->num_threads() == 1) return "1 thread: serial loop";
  if (!ran_serial_loop_) return engine_->adaptive().reason();
  return engine_->adaptive().reason() + " (1 thread: serial loop)";
}

void ParallelExecutor::set_serial_layout(bool serial) {
  if (serial == serial_layout_) return;
  // One layout in memory at a time: the events leave the old layout, whose
  // storage is freed, before the new one is built (the peak is one layout
  // plus the moving events, not two layouts).
  std::vector<Event> moving;
  moving.reserve(pending_count());  // no doubling: as large as the layout it leaves
  if (serial) {
    for (EntityId e = 0; e < instance_.num_entities; ++e) {
      instance_.queues[e].for_each([&moving](const Event& ev) { moving.push_back(ev); });
      instance_.queues[e].clear(engine_->caller_pool());
      instance_.publish_top(e);
    }
    release_queue_storage();
    platform::return_free_memory();
    for (const Event& ev : moving) serial_->insert(ev);
  } else {
    serial_->collect_pending(moving);
    release_serial_storage();
    platform::return_free_memory();
    NodePool& pool = engine_->caller_pool();
    for (const Event& ev : moving) instance_.queues[ev.target].push_local(ev, pool);
    for (EntityId e = 0; e < instance_.num_entities; ++e) instance_.publish_top(e);
  }
  serial_layout_ = serial;
}

void ParallelExecutor::release_serial_storage() {
  serial_ = std::make_unique<SerialExecutor>();
  serial_->bind(*instance_.dispatcher);
}

void ParallelExecutor::release_queue_storage() {
  for (EntityId e = 0; e < instance_.num_entities; ++e) instance_.queues[e].release_storage();
  engine_->release_idle_nodes();  // frees nothing while other instances hold events
}

void ParallelExecutor::insert(const Event& event) {
  if (serial_layout_) {
    serial_->insert(event);
    return;
  }
  instance_.queues[event.target].push_local(event, engine_->caller_pool());
  instance_.publish_top(event.target);
}

void ParallelExecutor::clear() {
  for (EntityId e = 0; e < instance_.num_entities; ++e) {
    instance_.queues[e].clear(engine_->caller_pool());
    instance_.publish_top(e);
  }
  serial_->clear();
  const bool serial = engine_->next_threads() == 1;
  // The layout the next events go to keeps its buffers for reuse (a reset
  // refills it); the other one's are freed.
  if (serial != serial_layout_) {
    if (serial) {
      release_queue_storage();
    } else {
      release_serial_storage();
    }
    platform::return_free_memory();
  }
  serial_layout_ = serial;
}

void ParallelExecutor::release_storage() {
  release_queue_storage();
  release_serial_storage();
  platform::return_free_memory();
}

void ParallelExecutor::initialize() {
  if (serial_layout_) {
    serial_->initialize();
    return;
  }
  engine_->initialize(instance_);
  for (EntityId e = 0; e < instance_.num_entities; ++e) instance_.publish_top(e);
}

void ParallelExecutor::collect_pending(std::vector<Event>& out) const {
  if (serial_layout_) {
    serial_->collect_pending(out);
    return;
  }
  for (EntityId e = 0; e < instance_.num_entities; ++e) {
    instance_.queues[e].for_each([&out](const Event& ev) { out.push_back(ev); });
  }
}

std::size_t ParallelExecutor::pending_count() const {
  if (serial_layout_) return serial_->pending_count();
  std::size_t n = 0;
  for (EntityId e = 0; e < instance_.num_entities; ++e) n += instance_.queues[e].size();
  return n;
}

void ParallelExecutor::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  engine_->parallel_for(n, fn);
}

void ParallelExecutor::use_queues() {
  set_serial_layout(false);
  ran_serial_loop_ = false;
}

void ParallelExecutor::run_serial_step(const StepWindow& window, StepStats& stats) {
  set_serial_layout(true);
  ran_serial_loop_ = true;
  stats.threads = 1;
  serial_->run_step(window, stats);
}

void ParallelExecutor::run_step(const StepWindow& window, StepStats& stats) {
  if (engine_->next_threads() == 1) {
    // One thread: nothing to gain from rounds; the serial loop is faster.
    const StepClock clock(engine_->serial_step_wants_cpu_time());
    std::exception_ptr failure;
    try {
      run_serial_step(window, stats);
    } catch (...) {
      failure = std::current_exception();
    }
    StepTiming timing;
    clock.stop(timing);
    timing.events = stats.events;
    engine_->record_serial_step(timing);
    if (failure) std::rethrow_exception(failure);
    return;
  }
  use_queues();
  ParallelInstance* self = &instance_;
  std::exception_ptr failure;
  engine_->run_steps(&self, &window, &stats, &failure, 1);
  if (failure) std::rethrow_exception(failure);
}

ParallelBatchRunner::ParallelBatchRunner(unsigned num_threads)
    : engine_(std::make_shared<ParallelEngine>(num_threads)) {}

std::unique_ptr<Executor> ParallelBatchRunner::add_instance() {
  auto executor = std::make_unique<ParallelExecutor>(engine_);
  members_.push_back(executor.get());
  return executor;
}

void ParallelBatchRunner::run_steps(const std::size_t* members, const StepWindow* windows,
                                    StepStats* stats, std::exception_ptr* failures,
                                    std::size_t count) {
  if (engine_->next_threads() == 1) {
    // One thread: each instance's serial loop in turn, on the caller.
    const StepClock clock(engine_->serial_step_wants_cpu_time());
    for (std::size_t k = 0; k < count; ++k) {
      ParallelExecutor& member = *members_.at(members[k]);
      stats[k] = StepStats{};
      failures[k] = nullptr;
      try {
        member.run_serial_step(windows[k], stats[k]);
      } catch (...) {
        failures[k] = std::current_exception();
      }
    }
    StepTiming timing;
    clock.stop(timing);
    for (std::size_t k = 0; k < count; ++k) timing.events += stats[k].events;
    engine_->record_serial_step(timing);
    return;
  }
  batch_.clear();
  for (std::size_t k = 0; k < count; ++k) {
    ParallelExecutor& member = *members_.at(members[k]);
    member.use_queues();
    batch_.push_back(&member.instance());
  }
  engine_->run_steps(batch_.data(), windows, stats, failures, count);
}

}  // namespace seer
