#include "seer/parallel_executor.hpp"

namespace seer {

ParallelExecutor::ParallelExecutor(unsigned num_threads)
    : ParallelExecutor(std::make_shared<ParallelEngine>(num_threads)) {}

ParallelExecutor::ParallelExecutor(std::shared_ptr<ParallelEngine> engine)
    : engine_(std::move(engine)) {}

ParallelExecutor::~ParallelExecutor() = default;

void ParallelExecutor::bind(Dispatcher& dispatcher) {
  dispatcher_ = &dispatcher;
  num_entities_ = dispatcher.num_entities();
  lookahead_ = dispatcher.spec().lookahead;
  queues_ = std::make_unique<LocalQueue[]>(num_entities_);
}

void ParallelExecutor::insert(const Event& event) {
  queues_[event.target].push_local(event);
  publish_top(event.target);
}

void ParallelExecutor::clear() {
  for (EntityId e = 0; e < num_entities_; ++e) {
    queues_[e].clear(engine_->caller_pool());
    publish_top(e);
  }
}

void ParallelExecutor::initialize() {
  engine_->initialize(*this);
  for (EntityId e = 0; e < num_entities_; ++e) publish_top(e);
}

void ParallelExecutor::collect_pending(std::vector<Event>& out) const {
  for (EntityId e = 0; e < num_entities_; ++e) {
    queues_[e].for_each([&out](const Event& ev) { out.push_back(ev); });
  }
}

std::size_t ParallelExecutor::pending_count() const {
  std::size_t n = 0;
  for (EntityId e = 0; e < num_entities_; ++e) n += queues_[e].size();
  return n;
}

void ParallelExecutor::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  engine_->parallel_for(n, fn);
}

void ParallelExecutor::run_step(const StepWindow& window, StepStats& stats) {
  ParallelExecutor* self = this;
  const auto failures = engine_->run_steps(&self, &window, &stats, 1);
  if (failures[0]) std::rethrow_exception(failures[0]);
}

void ParallelExecutor::fail(const FailureKey& key) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (!failure_ || key < failure_key_) {
    failure_key_ = key;
    failure_ = std::current_exception();
  }
  failed_.store(true, std::memory_order_release);
}

void ParallelExecutor::rethrow_failure() {
  if (!failed_.load(std::memory_order_acquire)) return;
  std::exception_ptr failure = failure_;
  failure_ = nullptr;
  failed_.store(false, std::memory_order_relaxed);
  std::rethrow_exception(failure);
}

}  // namespace seer
