#include "seer/parallel_executor.hpp"

#include <algorithm>
#include <limits>

#include "seer/errors.hpp"

namespace seer {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
// Workers add their event counts to the shared step total in batches.
constexpr std::uint64_t kBudgetBatch = 256;

}  // namespace

ParallelExecutor::ParallelExecutor(unsigned num_threads)
    : pool_(num_threads),
      workers_(std::make_unique<Worker[]>(num_threads)),
      barrier_(num_threads) {
  for (unsigned w = 0; w < num_threads; ++w) workers_[w].owner = this;
}

ParallelExecutor::~ParallelExecutor() = default;

void ParallelExecutor::bind(Dispatcher& dispatcher) {
  dispatcher_ = &dispatcher;
  num_entities_ = dispatcher.num_entities();
  lookahead_ = dispatcher.spec().lookahead;
  queues_ = std::make_unique<LocalQueue[]>(num_entities_);
  executive_ = std::make_unique<ExecutiveList>(num_entities_);
}

std::pair<EntityId, EntityId> ParallelExecutor::slice(unsigned w) const {
  const std::uint64_t n = num_entities_, t = pool_.size();
  return {static_cast<EntityId>(n * w / t), static_cast<EntityId>(n * (w + 1) / t)};
}

void ParallelExecutor::Worker::emit(const Event& event) {
  if (event.target == current) {
    owner->queues_[current].push_local(event);
    return;
  }
  EventNode* node = pool.allocate();
  node->event = event;
  owner->queues_[event.target].push_remote(node);
  local_min = std::min(local_min, event.time);
}

void ParallelExecutor::clear() {
  for (EntityId e = 0; e < num_entities_; ++e) queues_[e].clear(workers_[0].pool);
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

void ParallelExecutor::initialize() {
  pool_.run([this](unsigned w) {
    Worker& me = workers_[w];
    const auto [lo, hi] = slice(w);
    for (EntityId e = lo; e < hi; ++e) {
      me.current = e;
      try {
        dispatcher_->init(e, me);
      } catch (...) {
        fail(FailureKey{0, 0.0, e, 0});
        return;
      }
    }
  });
  rethrow_failure();
}

void ParallelExecutor::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  std::atomic<std::size_t> next{0};
  const std::size_t chunk = std::max<std::size_t>(1, n / (8 * pool_.size()));
  pool_.run([&](unsigned) {
    for (;;) {
      const std::size_t lo = next.fetch_add(chunk, std::memory_order_relaxed);
      if (lo >= n || failed_.load(std::memory_order_relaxed)) return;
      const std::size_t hi = std::min(n, lo + chunk);
      for (std::size_t i = lo; i < hi; ++i) {
        try {
          fn(i);
        } catch (...) {
          fail(FailureKey{0, 0.0, i, 0});
          return;
        }
      }
    }
  });
  rethrow_failure();
}

void ParallelExecutor::run_step(const StepWindow& window, StepStats& stats) {
  events_in_step_.store(0, std::memory_order_relaxed);
  rounds_ = 0;
  finished_ = false;
  executive_->reset();
  for (unsigned w = 0; w < pool_.size(); ++w) {
    workers_[w].events = workers_[w].cross_events = workers_[w].unreported = 0;
  }
  pool_.run([this, &window](unsigned w) { worker_step(w, window); });
  for (unsigned w = 0; w < pool_.size(); ++w) {
    stats.events += workers_[w].events;
    stats.cross_events += workers_[w].cross_events;
  }
  stats.rounds = rounds_;
  rethrow_failure();
}

void ParallelExecutor::end_round(double t_end) {
  double lb = kNever;
  for (unsigned w = 0; w < pool_.size(); ++w) lb = std::min(lb, workers_[w].local_min);
  executive_->reset();
  if (failed_.load(std::memory_order_acquire) || !(lb < t_end)) {
    finished_ = true;
    return;
  }
  ++rounds_;
  horizon_ = std::min(lb + lookahead_, t_end);
}

void ParallelExecutor::worker_step(unsigned w, const StepWindow& window) {
  Worker& me = workers_[w];
  const auto [lo, hi] = slice(w);
  me.local_min = kNever;
  begin_entities(me, lo, hi, window);
  barrier_.arrive_and_wait([&] { end_round(window.t_end); });
  while (!finished_) {
    const double horizon = horizon_;
    // Scan: publish my ready entities; remember the earliest of the others.
    me.local_min = kNever;
    for (EntityId e = lo; e < hi; ++e) {
      const double t = std::min(queues_[e].top_time(), queues_[e].inbox_bound());
      if (t < horizon) {
        executive_->push(e);
      } else {
        me.local_min = std::min(me.local_min, t);
      }
    }
    barrier_.arrive_and_wait();
    // Drain: pop ready entities until none is left.
    EntityId e;
    while (executive_->pop(e)) {
      drain_entity(me, e, horizon, window);
      executive_->done(e);
    }
    barrier_.arrive_and_wait([&] { end_round(window.t_end); });
  }
}

void ParallelExecutor::begin_entities(Worker& me, EntityId lo, EntityId hi,
                                      const StepWindow& window) {
  for (EntityId e = lo; e < hi; ++e) {
    me.current = e;
    queues_[e].drain(me.pool);
    try {
      dispatcher_->step_begin(e, window.t_begin, me);
    } catch (...) {
      fail(FailureKey{0, window.t_begin, e, 0});
      continue;
    }
    if (e < window.num_agents && (window.alive == nullptr || window.alive[e])) {
      try {
        dispatcher_->action(e, window.t_begin, window.actions[e], me);
      } catch (...) {
        fail(FailureKey{1, window.t_begin, e, 0});
        continue;
      }
    }
    me.local_min = std::min(me.local_min, queues_[e].top_time());
  }
}

void ParallelExecutor::drain_entity(Worker& me, EntityId e, double horizon,
                                    const StepWindow& window) {
  LocalQueue& q = queues_[e];
  me.current = e;
  q.drain(me.pool);
  while (!q.empty_local() && q.top().time < horizon) {
    const Event event = q.pop();
    try {
      count_event(me, window);
      dispatcher_->event(event, me);
    } catch (...) {
      // This entity stops at its first failure; the others finish the round
      // so that the failure with the smallest serial key can be reported.
      fail(FailureKey{2, event.time, event.source, event.seq});
      return;
    }
    ++me.events;
    if (event.source != event.target) ++me.cross_events;
  }
  me.local_min = std::min(me.local_min, q.top_time());
}

void ParallelExecutor::count_event(Worker& me, const StepWindow& window) {
  if (window.event_budget == 0) return;
  if (++me.unreported == kBudgetBatch) {
    const std::uint64_t total =
        events_in_step_.fetch_add(me.unreported, std::memory_order_relaxed) + me.unreported;
    me.unreported = 0;
    if (total > window.event_budget) throw_event_budget(window);
  }
}

}  // namespace seer
