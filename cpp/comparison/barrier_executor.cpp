#include "barrier_executor.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "seer/errors.hpp"

namespace seer {
namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
}

BarrierExecutor::BarrierExecutor(unsigned num_threads)
    : pool_(num_threads), barrier_(num_threads), parts_(std::make_unique<Partition[]>(num_threads)) {
  for (unsigned w = 0; w < num_threads; ++w) parts_[w].owner = this;
}

void BarrierExecutor::bind(Dispatcher& dispatcher) {
  dispatcher_ = &dispatcher;
  lookahead_ = dispatcher.spec().lookahead;
  num_entities_ = dispatcher.num_entities();
  owner_.resize(num_entities_);
  const std::uint64_t n = num_entities_, t = pool_.size();
  for (unsigned w = 0; w < t; ++w) {
    parts_[w].lo = static_cast<EntityId>(n * w / t);
    parts_[w].hi = static_cast<EntityId>(n * (w + 1) / t);
    for (EntityId e = parts_[w].lo; e < parts_[w].hi; ++e) owner_[e] = w;
  }
}

unsigned BarrierExecutor::owner_of(EntityId e) const { return owner_[e]; }

void BarrierExecutor::Partition::emit(const Event& event) {
  const unsigned target = owner->owner_of(event.target);
  if (&owner->parts_[target] == this) {
    heap.push(event);
    return;
  }
  Partition& other = owner->parts_[target];
  {
    std::lock_guard<std::mutex> lock(other.mailbox_mutex);
    other.mailbox.push_back(event);
  }
  local_min = std::min(local_min, event.time);
}

void BarrierExecutor::merge_mailbox(Partition& p) {
  std::lock_guard<std::mutex> lock(p.mailbox_mutex);
  for (const Event& e : p.mailbox) p.heap.push(e);
  p.mailbox.clear();
}

void BarrierExecutor::clear() {
  for (unsigned w = 0; w < pool_.size(); ++w) {
    parts_[w].heap.clear();
    parts_[w].mailbox.clear();
  }
}

void BarrierExecutor::insert(const Event& event) { parts_[owner_of(event.target)].heap.push(event); }

void BarrierExecutor::collect_pending(std::vector<Event>& out) const {
  for (unsigned w = 0; w < pool_.size(); ++w) {
    parts_[w].heap.for_each([&out](const Event& e) { out.push_back(e); });
    out.insert(out.end(), parts_[w].mailbox.begin(), parts_[w].mailbox.end());
  }
}

std::size_t BarrierExecutor::pending_count() const {
  std::size_t n = 0;
  for (unsigned w = 0; w < pool_.size(); ++w) n += parts_[w].heap.size() + parts_[w].mailbox.size();
  return n;
}

void BarrierExecutor::initialize() {
  pool_.run([this](unsigned w) {
    Partition& p = parts_[w];
    try {
      for (EntityId e = p.lo; e < p.hi; ++e) dispatcher_->init(e, p);
    } catch (...) {
      p.failure = std::current_exception();
    }
  });
  for (unsigned w = 0; w < pool_.size(); ++w) {
    merge_mailbox(parts_[w]);
    if (parts_[w].failure) std::rethrow_exception(std::exchange(parts_[w].failure, nullptr));
  }
}

void BarrierExecutor::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  std::exception_ptr error;
  std::mutex m;
  pool_.run([&](unsigned w) {
    const std::size_t t = pool_.size();
    try {
      for (std::size_t i = n * w / t; i < n * (w + 1) / t; ++i) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!error) error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);
}

void BarrierExecutor::end_round(double t_end) {
  double lb = kNever;
  for (unsigned w = 0; w < pool_.size(); ++w) lb = std::min(lb, parts_[w].local_min);
  // relaxed: read by the barrier's last arriver; the barrier orders it.
  if (failed_.load(std::memory_order_relaxed) || !(lb < t_end)) {
    finished_ = true;
    return;
  }
  ++rounds_;
  horizon_ = safe_horizon(lb, lookahead_, t_end);
}

void BarrierExecutor::run_step(const StepWindow& window, StepStats& stats) {
  finished_ = false;
  rounds_ = 0;
  // relaxed: before the pool's run(), which orders it for the workers.
  failed_.store(false, std::memory_order_relaxed);
  pool_.run([&](unsigned w) { worker(w, window); });
  std::exception_ptr failure;
  for (unsigned w = 0; w < pool_.size(); ++w) {
    stats.events += parts_[w].events;
    stats.cross_events += parts_[w].cross_events;
    if (parts_[w].failure && !failure) failure = parts_[w].failure;
    parts_[w].failure = nullptr;
  }
  stats.rounds = rounds_;
  if (failure) std::rethrow_exception(failure);
}

void BarrierExecutor::worker(unsigned w, const StepWindow& window) {
  Partition& p = parts_[w];
  p.events = p.cross_events = 0;
  p.local_min = kNever;
  try {
    for (EntityId e = p.lo; e < p.hi; ++e) {
      dispatcher_->step_begin(e, window.t_begin, p);
      if (e < window.num_agents && (window.alive == nullptr || window.alive[e])) {
        dispatcher_->action(e, window.t_begin, window.actions[e], p);
      }
    }
  } catch (...) {
    p.failure = std::current_exception();
    // relaxed: a stop hint; the failure is read after a barrier.
    failed_.store(true, std::memory_order_relaxed);
  }
  for (;;) {
    barrier_.arrive_and_wait();  // all sends of the round are in the mailboxes
    merge_mailbox(p);
    p.local_min = std::min(p.local_min, p.heap.top_time());
    barrier_.arrive_and_wait([&] { end_round(window.t_end); });
    if (finished_) return;
    const double horizon = horizon_;
    p.local_min = kNever;
    try {
      while (p.heap.top_time() < horizon) {
        // relaxed: a stop hint (see fail paths); stopping late is harmless.
        if (failed_.load(std::memory_order_relaxed)) break;
        const Event event = p.heap.pop();
        if (window.event_budget != 0 && p.events >= window.event_budget) {
          throw_event_budget(window);
        }
        dispatcher_->event(event, p);
        ++p.events;
        if (event.source != event.target) ++p.cross_events;
      }
    } catch (...) {
      p.failure = std::current_exception();
      // relaxed: a stop hint; the failure is read after a barrier.
      failed_.store(true, std::memory_order_relaxed);
    }
  }
}

}  // namespace seer
