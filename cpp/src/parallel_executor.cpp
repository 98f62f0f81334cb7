#include "parallel_executor.hpp"

#include <limits>

#include "platform.hpp"

namespace seer {
namespace {
constexpr double kNoEvent = std::numeric_limits<double>::infinity();
}  // namespace

ParallelExecutor::ParallelExecutor(unsigned num_threads)
    : ParallelExecutor(std::make_shared<ParallelEngine>(num_threads)) {
  owns_engine_ = true;
}

ParallelExecutor::ParallelExecutor(std::shared_ptr<ParallelEngine> engine)
    : engine_(std::move(engine)) {}

// The pending events' nodes stay in the engine's pool blocks, out of the free
// lists: the engine goes with this executor, except in a ParallelBatchRunner,
// which keeps its members for its whole life. Not walking the queues here
// also keeps the destructor safe for an executor torn by fork() mid-step.
ParallelExecutor::~ParallelExecutor() = default;

void ParallelExecutor::bind(Dispatcher& dispatcher) {
  instance_.bind(dispatcher);
  one_thread_.bind(dispatcher);
}

std::string ParallelExecutor::thread_decision() const {
  if (engine_->num_threads() == 1) return "1 thread: serial loop";
  if (ran_serial_loop_) return engine_->adaptive().reason() + " (1 thread: serial loop)";
  if (engine_->last_threads() == 1) {
    if (engine_->adaptive().reduction_confirmed()) {
      return engine_->adaptive().reason() + " (1 thread: rounds, too many events to move)";
    }
    return engine_->adaptive().reason() + " (1 thread: rounds until a probe fails)";
  }
  return engine_->adaptive().reason();
}

void ParallelExecutor::insert(const Event& event) { insert_some(&event, 1); }

void ParallelExecutor::insert_some(const Event* events, std::size_t n) {
  if (n == 0) return;
  // Where the next step looks first.
  if (engine_->next_step_runs_serial_loop()) {
    for (std::size_t i = 0; i < n; ++i) one_thread_.insert(events[i]);
    calendar_released_ = false;
    return;
  }
  NodePool& pool = engine_->caller_pool();
  for (std::size_t i = 0; i < n; ++i) {
    const EntityId target = events[i].target;
    instance_.queues[target].push_local(events[i], pool);
    instance_.publish_top(target);
    touched_.push_back(target);  // for the next decision window (run_step)
  }
  one_thread_.queues_changed();
  queues_released_ = false;
}

namespace {
// Fewer events than this are inserted on the caller: waking the pool costs
// more than pushing them (a few hundred nanoseconds each).
constexpr std::size_t kInsertOnThePoolAtLeast = 256;
}  // namespace

void ParallelExecutor::insert_lists(const std::vector<Event>* lists, std::size_t count) {
  std::size_t total = 0;
  for (std::size_t k = 0; k < count; ++k) total += lists[k].size();
  if (total < kInsertOnThePoolAtLeast || engine_->next_step_runs_serial_loop() ||
      engine_->adaptive().threads() == 1) {
    for (std::size_t k = 0; k < count; ++k) insert_some(lists[k].data(), lists[k].size());
    return;
  }
  engine_->insert_lists(instance_, lists, count, touched_);
  one_thread_.queues_changed();
  queues_released_ = false;
}

namespace {
// A load of fewer events than this takes the free list as it is (relinking
// walks every node of the pools).
constexpr std::size_t kRelinkAtLeast = 4096;
}  // namespace

void ParallelExecutor::insert_all(const Event* events, std::size_t n) {
  if (engine_->next_step_runs_serial_loop()) {
    Executor::insert_all(events, n);
    return;
  }
  // Entity by entity (a counting sort on the target, stable): each queue's
  // lines are loaded once, not once per event in key order across all of
  // them (a load of PCS 128x128 took ~65 ms that way).
  engine_->forget_open_step();
  if (n >= kRelinkAtLeast) engine_->relink_idle_nodes();
  const EntityId entities = instance_.num_entities;
  std::vector<std::size_t> start(static_cast<std::size_t>(entities) + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++start[events[i].target + 1];
  for (EntityId e = 0; e < entities; ++e) start[e + 1] += start[e];
  std::vector<std::uint32_t> by_target(n);
  {
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) by_target[next[events[i].target]++] = static_cast<std::uint32_t>(i);
  }
  // Latest first: a load's events come in key order, and a queue's sorted
  // run takes its earliest event at its end in O(1), a later one only after
  // walking past every earlier one.
  NodePool& pool = engine_->caller_pool();
  for (EntityId e = 0; e < entities; ++e) {
    if (start[e] == start[e + 1]) continue;
    for (std::size_t k = start[e + 1]; k-- > start[e];) {
      instance_.queues[e].push_local(events[by_target[k]], pool);
    }
    instance_.publish_top(e);
  }
  one_thread_.queues_changed();
  queues_released_ = false;
}

void ParallelExecutor::clear() {
  engine_->forget_open_step();
  // Both keep their buffers for the events a reset brings back.
  for (EntityId e = 0; e < instance_.num_entities; ++e) {
    instance_.queues[e].clear(engine_->caller_pool());
    instance_.publish_top(e);
  }
  one_thread_.clear();
  one_thread_.queues_changed();
}

void ParallelExecutor::release_queue_storage() {
  for (EntityId e = 0; e < instance_.num_entities; ++e) instance_.queues[e].release_storage();
  engine_->release_idle_nodes();  // frees nothing while other instances hold events
}

void ParallelExecutor::release_storage() {
  release_queue_storage();
  one_thread_.release_storage();
  platform::return_free_memory();
}

void ParallelExecutor::initialize() {
  engine_->forget_open_step();
  if (engine_->next_step_runs_serial_loop()) {
    // On the caller alone, as the step will run: no worker wakes for it.
    one_thread_.initialize();
    calendar_released_ = false;
    return;
  }
  engine_->initialize(instance_);
  for (EntityId e = 0; e < instance_.num_entities; ++e) instance_.publish_top(e);
  one_thread_.queues_changed();
  queues_released_ = false;
}

void ParallelExecutor::collect_pending(std::vector<Event>& out) const {
  for (EntityId e = 0; e < instance_.num_entities; ++e) {
    instance_.queues[e].for_each([&out](const Event& ev) { out.push_back(ev); });
  }
  one_thread_.collect_pending(out);
}

bool ParallelExecutor::pending_in_place(std::vector<const Event*>& out) const {
  for (EntityId e = 0; e < instance_.num_entities; ++e) {
    instance_.queues[e].for_each([&out](const Event& ev) { out.push_back(&ev); });
  }
  one_thread_.pending_in_place(out);
  return true;
}

std::size_t ParallelExecutor::pending_count() const {
  std::size_t n = one_thread_.size();
  for (EntityId e = 0; e < instance_.num_entities; ++e) n += instance_.queues[e].size();
  return n;
}

void ParallelExecutor::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  engine_->parallel_for(n, fn);
}

bool ParallelExecutor::queues_hold_events() const {
  if (one_thread_.queues_empty()) return false;
  for (EntityId e = 0; e < instance_.num_entities; ++e) {
    // earliest() may be stale low (an inbox bound): then "may hold".
    if (instance_.queues[e].earliest() < kNoEvent) return true;
  }
  return false;
}

bool ParallelExecutor::run_step_one_at_a_time(const StepWindow& window, StepStats& stats) {
  if (engine_->next_step_runs_serial_loop() || !queues_hold_events()) {
    run_serial_step(window, stats);
    return true;
  }
  before_rounds(window);
  std::exception_ptr failure;
  engine_->run_step_on_caller(instance_, window, stats, failure);
  if (failure) std::rethrow_exception(failure);
  return true;
}

bool ParallelExecutor::initialize_one_at_a_time() {
  one_thread_.initialize();
  calendar_released_ = false;
  return true;
}

void ParallelExecutor::run_serial_step(const StepWindow& window, StepStats& stats) {
  engine_->forget_open_step();  // the loop changes the queues behind the calendars
  touched_.clear();
  ran_serial_loop_ = true;
  calendar_released_ = false;
  stats.threads = 1;
  if (owns_engine_ && !one_thread_.queues_empty()) {
    // The serial loop takes over (a confirmed shed, a failed probe): every
    // event of the queues moves into its calendar now, node block by node
    // block, each block freed once moved. Moving only the due events each
    // step (as a vector env's shared engine still does, its blocks holding
    // other instances' events) left the blocks allocated until the last
    // event came due, beside a calendar that grew to hold every event: two
    // full layouts for as long (PCS 256x256: 442 MB against 316 MB). The
    // calendar's room comes first: growing by doubling as the events came
    // held its old and new slab at once (PCS 128x128: 122 MB against 110).
    one_thread_.reserve(pending_count() - one_thread_.size());
    engine_->move_out_events(instance_, [this](const Event& e) { one_thread_.insert(e); });
    one_thread_.queues_emptied();
    queues_released_ = true;
  }
  one_thread_.run_step(instance_, engine_->caller_pool(), window, stats);
  if (one_thread_.queues_empty() && !queues_released_) {
    // The last event left the queues: one layout in memory again.
    release_queue_storage();
    platform::return_free_memory();
    queues_released_ = true;
  }
}

void ParallelExecutor::before_rounds(const StepWindow& window) {
  // The first step in rounds after serial-loop steps (a probe, which may
  // fail) takes from the calendar only the events it handles. The next one
  // (the probe restored the threads) takes the rest, giving the calendar's
  // pages back as it goes, and frees the calendar: left to come due, they
  // kept its buffers at full size beside queues filling up, two full
  // layouts until its farthest event came due (PCS: ~100 steps); taken in
  // key order, both layouts were in memory at the end of the move (PCS
  // 128x128: 141 MB against 110).
  touched_.clear();  // a full begin read follows
  const bool probe = ran_serial_loop_;
  ran_serial_loop_ = false;
  queues_released_ = false;
  if (probe) {
    one_thread_.hand_to_queues(instance_, engine_->caller_pool(), window.t_end);
  } else if (one_thread_.size() != 0) {
    one_thread_.hand_all_to_queues(instance_, engine_->caller_pool());
  }
  one_thread_.queues_changed();  // the rounds will change them
  if (one_thread_.size() == 0 && !calendar_released_) {
    // The last event left the calendar: one layout in memory again.
    one_thread_.release_storage();
    platform::return_free_memory();
    calendar_released_ = true;
  }
}

void ParallelExecutor::run_step(const StepWindow& window, StepStats& stats) {
  if (engine_->next_step_runs_serial_loop()) {
    // One thread for a while (a pool of one, a confirmed shed): nothing to
    // gain from rounds; the serial loop is faster.
    const StepClock clock(engine_->serial_step_wants_run_delay());
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
  std::exception_ptr failure;
  // Not while the serial loop's calendar holds events: a probe after
  // serial-loop steps hands over only those of its own window
  // (before_rounds), and the queues must hold the rest before rounds go on.
  if (window.continues_step && one_thread_.size() == 0 && engine_->can_continue(instance_)) {
    // The step's next decision window: the engine still knows every pending
    // event up to the step's end but those inserted since (touched_).
    engine_->continue_step(instance_, window, stats, failure, touched_);
    touched_.clear();
    if (failure) std::rethrow_exception(failure);
    return;
  }
  before_rounds(window);
  ParallelInstance* self = &instance_;
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
  if (engine_->next_step_runs_serial_loop()) {
    // One thread for a while: each instance's serial loop in turn, on the caller.
    const StepClock clock(engine_->serial_step_wants_run_delay());
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
    member.before_rounds(windows[k]);
    batch_.push_back(&member.instance());
  }
  engine_->run_steps(batch_.data(), windows, stats, failures, count);
}

}  // namespace seer
