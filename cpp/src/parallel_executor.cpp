#include "seer/parallel_executor.hpp"

namespace seer {

ParallelExecutor::ParallelExecutor(unsigned num_threads)
    : ParallelExecutor(std::make_shared<ParallelEngine>(num_threads)) {}

ParallelExecutor::ParallelExecutor(std::shared_ptr<ParallelEngine> engine)
    : engine_(std::move(engine)) {}

ParallelExecutor::~ParallelExecutor() = default;

void ParallelExecutor::bind(Dispatcher& dispatcher) { instance_.bind(dispatcher); }

void ParallelExecutor::insert(const Event& event) {
  instance_.queues[event.target].push_local(event);
  instance_.update_scan_top(event.target);
}

void ParallelExecutor::clear() {
  for (EntityId e = 0; e < instance_.num_entities; ++e) {
    instance_.queues[e].clear(engine_->caller_pool());
    instance_.update_scan_top(e);
  }
}

void ParallelExecutor::initialize() {
  engine_->initialize(instance_);
  for (EntityId e = 0; e < instance_.num_entities; ++e) instance_.update_scan_top(e);
}

void ParallelExecutor::collect_pending(std::vector<Event>& out) const {
  for (EntityId e = 0; e < instance_.num_entities; ++e) {
    instance_.queues[e].for_each([&out](const Event& ev) { out.push_back(ev); });
  }
}

std::size_t ParallelExecutor::pending_count() const {
  std::size_t n = 0;
  for (EntityId e = 0; e < instance_.num_entities; ++e) n += instance_.queues[e].size();
  return n;
}

void ParallelExecutor::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  engine_->parallel_for(n, fn);
}

void ParallelExecutor::run_step(const StepWindow& window, StepStats& stats) {
  ParallelInstance* self = &instance_;
  std::exception_ptr failure;
  engine_->run_steps(&self, &window, &stats, &failure, 1);
  if (failure) std::rethrow_exception(failure);
}

ParallelBatchRunner::ParallelBatchRunner(unsigned num_threads)
    : engine_(std::make_shared<ParallelEngine>(num_threads)) {}

std::unique_ptr<Executor> ParallelBatchRunner::add_instance() {
  auto executor = std::make_unique<ParallelExecutor>(engine_);
  members_.push_back(&executor->instance());
  return executor;
}

void ParallelBatchRunner::run_steps(const std::size_t* members, const StepWindow* windows,
                                    StepStats* stats, std::exception_ptr* failures,
                                    std::size_t count) {
  batch_.clear();
  for (std::size_t k = 0; k < count; ++k) batch_.push_back(members_.at(members[k]));
  engine_->run_steps(batch_.data(), windows, stats, failures, count);
}

}  // namespace seer
