#include "seer/parallel_engine.hpp"

#include <algorithm>
#include <limits>
#include <mutex>

#include "seer/errors.hpp"
#include "seer/spin_wait.hpp"

namespace seer {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
// Workers add their event counts to an instance's step total in batches.
constexpr std::uint64_t kBudgetBatch = 256;
// Draining an entity starts the loads of the entity this many places later
// in the claimed batch.
constexpr std::size_t kPrefetchAhead = 2;

}  // namespace

// What one worker thread owns. Per-instance vectors are indexed by the
// instance's position in the batch.
struct alignas(64) ParallelEngine::Worker final : EventSink {
  void emit(const Event& event) override {
    if (event.target == current) {  // self-event: straight into the owner-private heap
      inst->queues[current].push_local(event);
      ++local_pushes;
      return;
    }
    EventNode* node = pool.allocate();
    node->event = event;
    inst->queues[event.target].push_remote(node);
    per[inst_index].min = std::min(per[inst_index].min, event.time);
  }

  ParallelInstance* inst = nullptr;  // instance of the entity being handled
  std::size_t inst_index = 0;
  std::uint64_t local_pushes = 0;     // self-events emitted (tells begin_slice what changed)
  EntityId current = 0;
  NodePool pool;
  std::uint64_t lo = 0, hi = 0;        // my slice of the batch's global entity ids
  // Per instance of the batch. A cache line each: workers update these on
  // every event, and small vectors of different workers allocated side by
  // side shared lines (false sharing cost ~50 us per round on PHOLD).
  struct alignas(64) PerInstance {
    double min;                  // earliest pending time seen this round
    std::uint64_t events;        // handled this step
    std::uint64_t cross_events;  // of those, from another entity
    std::uint64_t unreported;    // not yet added to the instance's budget count
  };
  std::vector<PerInstance> per;
  std::vector<EntityId> ready;         // scan scratch (global ids)
  std::vector<std::uint8_t> visited;   // steal scratch: lists drained this round
};

// One run_steps call.
struct ParallelEngine::Batch {
  ParallelInstance* const* instances = nullptr;
  std::size_t count = 0;
  std::vector<std::uint64_t> offsets;  // prefix sums of entity counts, count + 1
  bool all_finished = false;
};

ParallelEngine::ParallelEngine(unsigned num_threads)
    : pool_(num_threads),
      barrier_(pool_.size()),
      workers_(std::make_unique<Worker[]>(pool_.size())),
      executive_(pool_.size()) {}

ParallelEngine::~ParallelEngine() = default;

NodePool& ParallelEngine::caller_pool() { return workers_[0].pool; }

void ParallelEngine::balance_node_pools() {
  // Workers allocate the nodes of the events they send and free those they
  // receive (and clear() frees into the caller's pool): with uneven traffic
  // the free nodes pile up in some pools while others keep growing. Between
  // runs (no worker touches a pool), even them out; the slack of a block
  // keeps balanced pools from trading nodes every run.
  const unsigned t = pool_.size();
  if (t == 1) return;
  std::size_t total = 0;
  for (unsigned w = 0; w < t; ++w) total += workers_[w].pool.free_count();
  const std::size_t share = total / t;
  unsigned to = 0;
  for (unsigned from = 0; from < t; ++from) {
    NodePool& donor = workers_[from].pool;
    if (donor.free_count() <= share + NodePool::kBlock) continue;
    while (donor.free_count() > share) {
      while (to < t && workers_[to].pool.free_count() >= share) ++to;
      if (to == t) break;
      NodePool& taker = workers_[to].pool;
      donor.give(taker, std::min(share - taker.free_count(), donor.free_count() - share));
    }
  }
}

void ParallelEngine::prepare(Batch& batch) {
  batch.offsets.assign(1, 0);
  for (std::size_t i = 0; i < batch.count; ++i) {
    batch.offsets.push_back(batch.offsets.back() + batch.instances[i]->num_entities);
  }
  const std::uint64_t total = batch.offsets.back();
  // Rebuild the global -> instance map only when the layout changes.
  bool same = instance_of_.size() == total;
  for (std::size_t i = 0; same && i < batch.count; ++i) {
    same = total == 0 || (batch.offsets[i] == batch.offsets[i + 1]) ||
           instance_of_[batch.offsets[i]] == i;
  }
  if (!same || total == 0) {
    instance_of_.resize(total);
    for (std::size_t i = 0; i < batch.count; ++i) {
      std::fill(instance_of_.begin() + static_cast<std::ptrdiff_t>(batch.offsets[i]),
                instance_of_.begin() + static_cast<std::ptrdiff_t>(batch.offsets[i + 1]),
                static_cast<std::uint32_t>(i));
    }
  }
  const unsigned t = pool_.size();
  for (unsigned w = 0; w < t; ++w) {
    Worker& me = workers_[w];
    me.lo = total * w / t;
    me.hi = total * (w + 1) / t;
    auto& list = executive_[w];
    if (!list || list->first_id() != me.lo || list->capacity() != me.hi - me.lo) {
      list = std::make_unique<ExecutiveList>(me.hi - me.lo, static_cast<EntityId>(me.lo));
    }
    list->reset();
    if (me.ready.size() < me.hi - me.lo) me.ready.resize(me.hi - me.lo);
    me.per.assign(batch.count, Worker::PerInstance{kNever, 0, 0, 0});
  }
  batch.all_finished = false;
}

void ParallelEngine::run_steps(ParallelInstance* const* instances, const StepWindow* windows,
                               StepStats* stats, std::exception_ptr* failures, std::size_t count) {
  Batch batch;
  batch.instances = instances;
  batch.count = count;
  for (std::size_t i = 0; i < count; ++i) {
    ParallelInstance& inst = *instances[i];
    inst.window = &windows[i];
    inst.finished = false;
    inst.rounds = 0;
    // relaxed: the pool's run() start orders this before every worker's adds.
    inst.events_in_step.store(0, std::memory_order_relaxed);
  }
  prepare(batch);
  balance_node_pools();
  pool_.run([&](unsigned w) { worker_step(w, batch); });
  for (std::size_t i = 0; i < count; ++i) {
    stats[i] = StepStats{};
    for (unsigned w = 0; w < pool_.size(); ++w) {
      stats[i].events += workers_[w].per[i].events;
      stats[i].cross_events += workers_[w].per[i].cross_events;
    }
    stats[i].rounds = instances[i]->rounds;
    failures[i] = nullptr;
    try {
      instances[i]->rethrow_failure();
    } catch (...) {
      failures[i] = std::current_exception();
    }
  }
}

void ParallelEngine::worker_step(unsigned w, Batch& batch) {
  Worker& me = workers_[w];
  begin_slice(me, batch);
  barrier_.arrive_and_wait([&] { end_round(batch); });
  while (!batch.all_finished) {
    // Scan: list my ready entities; remember the earliest of the others.
    for (auto& p : me.per) p.min = kNever;
    EntityId* out = me.ready.data();  // sized to the slice in prepare()
    for (std::size_t i = instance_of_.empty() ? 0 : (me.lo < me.hi ? instance_of_[me.lo] : batch.count);
         i < batch.count && batch.offsets[i] < me.hi; ++i) {
      ParallelInstance& inst = *batch.instances[i];
      if (inst.finished) continue;
      const double horizon = inst.horizon;
      const std::uint64_t base = batch.offsets[i];
      const auto lo = static_cast<EntityId>(std::max(me.lo, base) - base);
      const auto hi = static_cast<EntityId>(std::min(me.hi, batch.offsets[i + 1]) - base);
      // The hottest loop of a round (once per entity): locals and raw
      // pointers, so the compiler keeps the minimum in a register.
      const LocalQueue* queues = inst.queues.get();
      double later = me.per[i].min;
      for (EntityId e = lo; e < hi; ++e) {
        const double t = queues[e].earliest();
        if (t < horizon) {
          *out++ = static_cast<EntityId>(base + e);
        } else if (t < later) {
          later = t;
        }
      }
      me.per[i].min = later;
    }
    ExecutiveList& mine = *executive_[w];
    mine.push_batch(me.ready.data(), static_cast<std::size_t>(out - me.ready.data()));
    mine.seal();
    // Drain my own list first, then steal from the others' (w+1, w+2, ...)
    // once their owners have sealed them: an entity stays with one worker
    // round after round, so its state and queue stay in that core's cache,
    // and stealing evens out the load. No barrier between scan and drain:
    // what a drain sends is at or after the horizon (>= now + L), so it
    // cannot make anything ready this round, and whoever sends it counts
    // its time towards the next LB (emit), so a scan racing with it loses
    // nothing.
    drain_list(me, batch, mine);
    steal(me, w, batch);
    barrier_.arrive_and_wait([&] { end_round(batch); });
  }
}

void ParallelEngine::steal(Worker& me, unsigned w, Batch& batch) {
  // Visit every other list once, in the order w+1, w+2, ..., each as soon as
  // its owner has sealed it: a slow scanner does not hold up the lists after
  // it (with many threads, someone is always last).
  const unsigned t = pool_.size();
  me.visited.assign(t, 0);
  me.visited[w] = 1;
  SpinWait wait;
  for (unsigned left = t - 1; left > 0;) {
    bool progress = false;
    for (unsigned k = 1; k < t; ++k) {
      const unsigned v = (w + k) % t;
      if (me.visited[v] || !executive_[v]->sealed()) continue;
      me.visited[v] = 1;
      --left;
      progress = true;
      drain_list(me, batch, *executive_[v]);
    }
    if (!progress) wait.once();
  }
}

void ParallelEngine::drain_list(Worker& me, Batch& batch, ExecutiveList& list) {
  // Claim ready entities in small batches until none is left. Batches shrink
  // with the list so that threads finish the round together.
  const std::size_t claim =
      std::clamp<std::size_t>(list.size_approx() / (4 * pool_.size()), 1, 32);
  const EntityId* first = nullptr;
  for (std::size_t n; (n = list.pop_batch(claim, &first)) != 0;) {
    for (std::size_t k = 0; k < n; ++k) {
      if (k + kPrefetchAhead < n) {
        const EntityId ahead = first[k + kPrefetchAhead];
        const std::size_t j = instance_of_[ahead];
        batch.instances[j]->prefetch(static_cast<EntityId>(ahead - batch.offsets[j]));
      }
      const EntityId g = first[k];
      const std::size_t i = instance_of_[g];
      ParallelInstance& inst = *batch.instances[i];
      drain_entity(me, inst, i, static_cast<EntityId>(g - batch.offsets[i]), inst.horizon);
      list.done(g);
    }
  }
}

void ParallelEngine::begin_slice(Worker& me, Batch& batch) {
  for (std::size_t i = me.lo < me.hi ? instance_of_[me.lo] : batch.count;
       i < batch.count && batch.offsets[i] < me.hi; ++i) {
    ParallelInstance& inst = *batch.instances[i];
    const StepWindow& window = *inst.window;
    const std::uint64_t base = batch.offsets[i];
    const auto lo = static_cast<EntityId>(std::max(me.lo, base) - base);
    const auto hi = static_cast<EntityId>(std::min(me.hi, batch.offsets[i + 1]) - base);
    me.inst = &inst;
    me.inst_index = i;
    // The first round's LB: every pending event is at or after t_begin (the
    // last step handled everything before it; this phase schedules at
    // >= now), so t_begin bounds them all without a pass over every entity.
    me.per[i].min = std::min(me.per[i].min, window.t_begin);
    for (EntityId e = lo; e < hi; ++e) {
      me.current = e;
      const std::uint64_t pushed = me.local_pushes;
      try {
        inst.dispatcher->step_begin(e, window.t_begin, me);
      } catch (...) {
        inst.fail({Phase::kStepBegin, window.t_begin, e, 0});
        continue;
      }
      if (e < window.num_agents && (window.alive == nullptr || window.alive[e])) {
        try {
          inst.dispatcher->action(e, window.t_begin, window.actions[e], me);
        } catch (...) {
          inst.fail({Phase::kAction, window.t_begin, e, 0});
          continue;
        }
      }
      // Only a self-event moves the heap's top; a send to another entity
      // lowers that entity's inbox bound itself, and the inbox is drained
      // when its entity is ready.
      if (me.local_pushes != pushed) inst.update_scan_top(e);
    }
  }
}

void ParallelEngine::drain_entity(Worker& me, ParallelInstance& inst, std::size_t i, EntityId e,
                                  double horizon) {
  LocalQueue& q = inst.queues[e];
  const StepWindow& window = *inst.window;
  me.inst = &inst;
  me.inst_index = i;
  me.current = e;
  q.drain(me.pool);
  while (q.top_time() < horizon) {
    const Event event = q.pop();
    try {
      if (window.event_budget != 0 && ++me.per[i].unreported == kBudgetBatch) {
        // relaxed: a counter; no data is published with it.
        const std::uint64_t total =
            inst.events_in_step.fetch_add(kBudgetBatch, std::memory_order_relaxed) + kBudgetBatch;
        me.per[i].unreported = 0;
        if (total > window.event_budget) throw_event_budget(window);
      }
      inst.dispatcher->event(event, me);
    } catch (...) {
      // This entity stops at its first failure; the others finish the round
      // so that the failure with the smallest serial key can be reported.
      inst.fail({Phase::kEvent, event.time, event.source, event.seq});
      return;
    }
    ++me.per[i].events;
    if (event.source != event.target) ++me.per[i].cross_events;
  }
  inst.update_scan_top(e);
  me.per[i].min = std::min(me.per[i].min, q.scan_top());
}

void ParallelEngine::end_round(Batch& batch) {
  bool all_finished = true;
  for (std::size_t i = 0; i < batch.count; ++i) {
    ParallelInstance& inst = *batch.instances[i];
    if (inst.finished) continue;
    double lb = kNever;
    for (unsigned w = 0; w < pool_.size(); ++w) lb = std::min(lb, workers_[w].per[i].min);
    // acquire: pairs with fail()'s release (the barrier orders it anyway).
    if (inst.failed.load(std::memory_order_acquire) || !(lb < inst.window->t_end)) {
      inst.finished = true;
      continue;
    }
    ++inst.rounds;
    inst.horizon = safe_horizon(lb, inst.lookahead, inst.window->t_end);
    all_finished = false;
  }
  for (unsigned w = 0; w < pool_.size(); ++w) executive_[w]->reset();
  batch.all_finished = all_finished;
}

void ParallelEngine::initialize(ParallelInstance& inst) {
  const std::uint64_t n = inst.num_entities, t = pool_.size();
  balance_node_pools();  // clear() freed the instance's nodes into the caller's pool
  pool_.run([&](unsigned w) {
    Worker& me = workers_[w];
    me.inst = &inst;
    me.inst_index = 0;
    me.per.assign(1, Worker::PerInstance{kNever, 0, 0, 0});
    for (auto e = static_cast<EntityId>(n * w / t); e < n * (w + 1) / t; ++e) {
      me.current = e;
      try {
        inst.dispatcher->init(e, me);
      } catch (...) {
        inst.fail({Phase::kInit, 0.0, e, 0});
        return;
      }
    }
  });
  inst.rethrow_failure();
}

void ParallelEngine::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::exception_ptr failure;
  const std::size_t chunk = std::max<std::size_t>(1, n / (8 * pool_.size()));
  pool_.run([&](unsigned) {
    for (;;) {
      // relaxed: next only hands out indices; failed only stops early (the
      // failure itself is read after run() returns, which orders it).
      const std::size_t lo = next.fetch_add(chunk, std::memory_order_relaxed);
      if (lo >= n || failed.load(std::memory_order_relaxed)) return;
      for (std::size_t i = lo; i < std::min(n, lo + chunk); ++i) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!failure) failure = std::current_exception();
          // relaxed: a stop hint; see the fetch_add above.
          failed.store(true, std::memory_order_relaxed);
          return;
        }
      }
    }
  });
  if (failure) std::rethrow_exception(failure);
}

}  // namespace seer
