#include "parallel_engine.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>
#include <limits>
#include <mutex>

#include "compiler.hpp"
#include "platform.hpp"
#include "seer/errors.hpp"
#include "spin_wait.hpp"
#include "wake_calendar.hpp"

namespace seer {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
// Workers add their event counts to an instance's step total in batches.
constexpr std::uint64_t kBudgetBatch = 256;
// Draining an entity starts the loads of the entity this many places later
// in the claimed batch.
constexpr std::size_t kPrefetchAhead = 2;
constexpr std::size_t kPrefetchQueueAhead = 6;
// A wait for late workers at the end of a pool region longer than the
// barrier's spin and yield budgets counts as a parked wait (someone was off
// its core), as a barrier wait that reached the futex does.
constexpr std::uint64_t kLongWaitNanos =
    static_cast<std::uint64_t>(WaitBudget::kSpinNanos + WaitBudget::kYieldNanos);

// A cross event's wake-up for the owner of its target (Worker::wake).
struct Notice {
  double time;
  std::uint64_t entity;  // global id in the batch
};

using Clock = std::chrono::steady_clock;
std::uint64_t nanos_between(Clock::time_point a, Clock::time_point b) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

}  // namespace

// What one worker thread owns. Per-instance vectors are indexed by the
// instance's position in the batch.
struct alignas(64) ParallelEngine::Worker final : EventSink {
  void emit(const Event& event) override {
    if (SEER_UNLIKELY(pool.free_count() == 0)) count_new_block();
    if (event.target == current) {  // self-event: straight into the owner-private heap
      inst->queues[current].push_local(event, pool);
      ++local_pushes;
      return;
    }
    inst->queues[event.target].push_remote(pool.allocate(event));
    per[inst_index].min = std::min(per[inst_index].min, event.time);
    if (notify) wake(event.target, event.time);
  }

  // The memory guard: my pool is about to grow by a block. Counted for the
  // whole engine (nodes freed by one worker feed another's pool), against
  // the sum of the batch's pending limits.
  void count_new_block() {
    // relaxed: a counter, no data published with it; a few blocks past the
    // limit before a worker notices are harmless.
    const std::uint64_t nodes =
        engine_nodes->fetch_add(NodePool::kBlock, std::memory_order_relaxed) + NodePool::kBlock;
    if (nodes > node_limit) throw_pending_limit(*inst->window, nodes);
  }

  // Tells the owner of `e` (of the instance being handled) that it holds an
  // event at `time`: into my own calendar, or a notice the owner takes at
  // the next round's start.
  void wake(EntityId e, double time) {
    // The next step's begin read finds it (a decision window's next one: its calendar).
    if (!(time < inst->window->known_until())) return;
    const std::uint64_t g = base + e;
    if (g >= lo && g < hi) {
      calendars[inst_index].add(time, e);
      return;
    }
    // The slices are [total * w / team, total * (w + 1) / team).
    const auto owner = static_cast<unsigned>(((g + 1) * team - 1) / total);
    outbox[owner][parity].push_back(Notice{time, g});
  }

  ParallelInstance* inst = nullptr;  // instance of the entity being handled
  std::size_t inst_index = 0;
  std::uint64_t base = 0;             // global id of inst's entity 0
  std::uint64_t local_pushes = 0;     // self-events emitted (tells begin_slice what changed)
  std::atomic<std::uint64_t>* engine_nodes = nullptr;  // ParallelEngine::nodes_
  std::uint64_t node_limit = UINT64_MAX;               // during run_steps only
  EntityId current = 0;
  NodePool pool;
  unsigned index = 0;                  // my place in the team
  std::uint64_t team = 1, total = 0;   // threads taking part; the batch's entities
  std::uint64_t lo = 0, hi = 0;        // my slice of the batch's global entity ids
  // Cross events also wake their target (see wake()); not in initialize(),
  // whose events the begin read of the next step finds.
  bool notify = false;
  // The wake notices I sent, per owner and round parity: a round's notices
  // go to outbox[owner][round & 1] and the owner takes them at the start of
  // the next round (after the barrier), while this round's senders write
  // the other parity. No atomics: the barrier orders both sides.
  std::vector<std::array<std::vector<Notice>, 2>> outbox;
  unsigned parity = 0;
  // Per instance of the batch (those of my slice only): my entities' wake
  // calendars.
  std::vector<WakeCalendar> calendars;
  // One bit per entity of my slice: listed this round. Merges an entity's
  // entries, and yields the list in id order (neighbours in memory are
  // drained one after another) for a pass over slice / 64 words.
  std::vector<std::uint64_t> listed;
  // Per instance of the batch. A cache line each: workers update these on
  // every event, and small vectors of different workers allocated side by
  // side shared lines (false sharing cost ~50 us per round on PHOLD).
  struct alignas(64) PerInstance {
    double min;                  // earliest pending time seen this round
    std::uint64_t events;        // handled this step
    std::uint64_t cross_events;  // of those, from another entity
    std::uint64_t unreported;    // not yet added to the instance's budget count
    std::uint64_t ready;         // entity visits that handled an event (StepStats::ready)
    std::uint64_t queue_reads;   // queue lines my begin reads and lists read (StepStats)
  };
  std::vector<PerInstance> per;
  std::vector<EntityId> ready;         // list scratch (global ids)
  std::vector<std::uint8_t> visited;   // steal scratch: lists drained this round
  std::vector<EntityId> inserted;      // insert_lists scratch: the targets I pushed to
  // Waiting, for the adaptive pool; measured only when a step has several
  // threads (timed).
  bool timed = false;
  Clock::time_point round_start;
  std::uint64_t wait_nanos = 0;
  std::uint64_t parked_waits = 0;
};

// One run_steps call.
struct ParallelEngine::Batch {
  ParallelInstance* const* instances = nullptr;
  std::size_t count = 0;
  std::vector<std::uint64_t> offsets;  // prefix sums of entity counts, count + 1
  bool all_finished = false;
  // Continues the last region's step (continue_step): no begin read; the
  // entities that got events since (one instance) go into their calendars.
  const std::vector<EntityId>* continued = nullptr;
};

ParallelEngine::ParallelEngine(unsigned num_threads)
    : pool_(num_threads),
      barrier_(pool_.size()),
      active_(pool_.size()),
      adaptive_(pool_.size()),
      workers_(std::make_unique<Worker[]>(pool_.size())),
      executive_(pool_.size()) {
  for (unsigned w = 0; w < pool_.size(); ++w) workers_[w].engine_nodes = &nodes_;
}

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

std::size_t ParallelEngine::node_capacity() const {
  std::size_t capacity = 0;
  for (unsigned w = 0; w < pool_.size(); ++w) capacity += workers_[w].pool.capacity();
  return capacity;
}

bool ParallelEngine::release_idle_nodes() {
  std::size_t free = 0;
  for (unsigned w = 0; w < pool_.size(); ++w) free += workers_[w].pool.free_count();
  if (free != node_capacity()) return false;  // some instance still holds events
  for (unsigned w = 0; w < pool_.size(); ++w) workers_[w].pool.drop_all();
  return true;
}

bool ParallelEngine::relink_idle_nodes() {
  std::size_t free = 0;
  for (unsigned w = 0; w < pool_.size(); ++w) free += workers_[w].pool.free_count();
  if (free != node_capacity()) return false;  // some instance still holds events
  NodePool& caller = workers_[0].pool;
  for (unsigned w = 0; w < pool_.size(); ++w) workers_[w].pool.forget_free_list();
  // Released last first, so that allocation takes them in address order.
  for (unsigned w = pool_.size(); w-- > 0;) {
    const NodePool& pool = workers_[w].pool;
    for (std::size_t b = pool.blocks(); b-- > 0;) {
      EventNode* block = pool.block(b);
      for (std::size_t i = NodePool::kBlock; i-- > 0;) caller.release(&block[i]);
    }
  }
  return true;
}

namespace {
// Freed blocks return to the system as the move goes, in kTrims parts (at
// least kMinTrimBlocks blocks, 2 MiB, each): malloc keeps freed 32 KiB blocks
// for itself, and the calendar fills meanwhile. A trim costs ~3 ms at 1M
// events; trimming every 8 MiB made the trims a third of the move.
constexpr std::size_t kTrims = 8;
constexpr std::size_t kMinTrimBlocks = 64;
}  // namespace

void ParallelEngine::move_out_events(ParallelInstance& inst,
                                     const std::function<void(const Event&)>& take) {
  continuable_ = nullptr;
  // The nodes holding events, from the heaps' key arrays (no node is read:
  // reading each in key order was a cache miss per event, ~100 ns), sorted
  // by address, and every block, by address: a block's live nodes are then a
  // run of `live`. Everything that allocates comes before the heaps forget
  // their keys (they keep the arrays, for the way back).
  std::size_t held = 0;
  for (EntityId e = 0; e < inst.num_entities; ++e) {
    inst.queues[e].drain();
    inst.queues[e].for_each_node([&held](EventNode*) { ++held; });
  }
  std::vector<EventNode*> live;
  live.reserve(held);
  for (EntityId e = 0; e < inst.num_entities; ++e) {
    inst.queues[e].for_each_node([&live](EventNode* n) { live.push_back(n); });
  }
  const auto before = std::less<const EventNode*>();
  std::sort(live.begin(), live.end(), before);
  struct Block {
    EventNode* base;
    unsigned pool;
    std::size_t index;
  };
  std::vector<Block> blocks;
  const unsigned t = pool_.size();
  for (unsigned w = 0; w < t; ++w) {
    const NodePool& pool = workers_[w].pool;
    for (std::size_t b = 0; b < pool.blocks(); ++b) blocks.push_back({pool.block(b), w, b});
  }
  std::sort(blocks.begin(), blocks.end(),
            [&before](const Block& a, const Block& b) { return before(a.base, b.base); });
  for (EntityId e = 0; e < inst.num_entities; ++e) {
    inst.queues[e].forget_nodes();
    inst.queues[e].publish_top();
  }
  for (unsigned w = 0; w < t; ++w) workers_[w].pool.forget_free_list();
  const std::size_t trim_every = std::max(kMinTrimBlocks, blocks.size() / kTrims);
  std::size_t next = 0;  // live[next] is the first event not yet taken
  std::size_t done = 0;  // blocks[0, done) are freed
  try {
    for (; done < blocks.size(); ++done) {
      const Block& b = blocks[done];
      for (; next < live.size() && before(live[next], b.base + NodePool::kBlock); ++next) {
        take(live[next]->event);
      }
      workers_[b.pool].pool.free_block(b.index);
      if ((done + 1) % trim_every == 0) platform::return_free_memory();
    }
  } catch (...) {
    // What was not taken goes back into its queue (the key arrays still have
    // room for it: no allocation); every other node of the remaining blocks
    // is free.
    for (std::size_t k = next; k < live.size(); ++k) {
      inst.queues[live[k]->event.target].adopt(live[k]);
    }
    for (unsigned w = 0; w < t; ++w) workers_[w].pool.drop_freed();
    std::size_t k = next;
    for (std::size_t i = done; i < blocks.size(); ++i) {
      for (std::size_t n = 0; n < NodePool::kBlock; ++n) {
        EventNode* node = blocks[i].base + n;
        if (k < live.size() && live[k] == node) {
          ++k;
        } else {
          workers_[blocks[i].pool].pool.release(node);
        }
      }
    }
    for (EntityId e = 0; e < inst.num_entities; ++e) inst.queues[e].publish_top();
    throw;
  }
  for (unsigned w = 0; w < t; ++w) workers_[w].pool.drop_freed();
  for (EntityId e = 0; e < inst.num_entities; ++e) inst.queues[e].release_storage();
  platform::return_free_memory();
}

void ParallelEngine::prepare(Batch& batch, bool continuing) {
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
  const unsigned t = active_;
  for (unsigned w = 0; w < t; ++w) {
    Worker& me = workers_[w];
    me.index = w;
    me.team = t;
    me.total = total;
    me.notify = true;
    me.outbox.resize(t);
    // A continued step keeps the last round's notices: its first list takes them.
    for (auto& pair : me.outbox) {
      if (continuing) break;
      pair[0].clear();
      pair[1].clear();
    }
    if (me.calendars.size() < batch.count) me.calendars.resize(batch.count);
    me.timed = t > 1;
    me.wait_nanos = 0;
    me.parked_waits = 0;
    me.lo = total * w / t;
    me.hi = total * (w + 1) / t;
    auto& list = executive_[w];
    if (!list || list->first_id() != me.lo || list->capacity() != me.hi - me.lo) {
      list = std::make_unique<ExecutiveList>(me.hi - me.lo, static_cast<EntityId>(me.lo));
    }
    list->reset();
    if (me.ready.size() < me.hi - me.lo) me.ready.resize(me.hi - me.lo);
    me.listed.assign((me.hi - me.lo + 63) / 64, 0);
    me.per.assign(batch.count, Worker::PerInstance{kNever, 0, 0, 0, 0, 0});
  }
  batch.all_finished = false;
}

void ParallelEngine::run_steps(ParallelInstance* const* instances, const StepWindow* windows,
                               StepStats* stats, std::exception_ptr* failures, std::size_t count) {
  // The adaptive pool picks how many threads take part; one runs on the
  // caller alone (no wake-up, no barrier partner).
  run_region(instances, windows, stats, failures, count, adaptive_.next_threads(), true);
}

void ParallelEngine::run_step_on_caller(ParallelInstance& instance, const StepWindow& window,
                                        StepStats& stats, std::exception_ptr& failure) {
  ParallelInstance* self = &instance;
  run_region(&self, &window, &stats, &failure, 1, 1, false);
}

bool ParallelEngine::can_continue(const ParallelInstance& instance) const {
  return continuable_ == &instance && adaptive_.next_threads() == active_;
}

void ParallelEngine::continue_step(ParallelInstance& instance, const StepWindow& window,
                                   StepStats& stats, std::exception_ptr& failure,
                                   const std::vector<EntityId>& touched) {
  ParallelInstance* self = &instance;
  run_region(&self, &window, &stats, &failure, 1, active_, true, &touched);
}

void ParallelEngine::run_region(ParallelInstance* const* instances, const StepWindow* windows,
                                StepStats* stats, std::exception_ptr* failures, std::size_t count,
                                unsigned team, bool record,
                                const std::vector<EntityId>* continued) {
  Batch batch;
  batch.instances = instances;
  batch.count = count;
  batch.continued = continued;
  continuable_ = nullptr;  // set again below if this region leaves a step open
  for (std::size_t i = 0; i < count; ++i) {
    ParallelInstance& inst = *instances[i];
    inst.window = &windows[i];
    inst.finished = false;
    inst.rounds = 0;
    // relaxed: the pool's run() start orders this before every worker's adds.
    inst.events_in_step.store(0, std::memory_order_relaxed);
  }
  active_ = team;
  barrier_.set_participants(active_);
  prepare(batch, continued != nullptr);
  balance_node_pools();
  // The memory guard: the nodes in the pools' blocks (about the pending
  // events, at their peak) against the batch's pending limits.
  std::uint64_t node_limit = 0;
  for (std::size_t i = 0; i < count; ++i) {
    node_limit = windows[i].pending_limit > UINT64_MAX - node_limit
                     ? UINT64_MAX
                     : node_limit + windows[i].pending_limit;
  }
  nodes_.store(node_capacity(), std::memory_order_relaxed);  // the run's start orders it
  for (unsigned w = 0; w < pool_.size(); ++w) workers_[w].node_limit = node_limit;
  const Clock::time_point start = Clock::now();
  std::uint64_t tail = 0;  // the caller's wait for workers to leave the region
  if (active_ == 1) {
    worker_step(0, batch);
  } else {
    tail = pool_.run([&](unsigned w) {
      if (w < active_) worker_step(w, batch);
    });
  }
  for (unsigned w = 0; w < pool_.size(); ++w) workers_[w].node_limit = UINT64_MAX;
  StepTiming timing;
  timing.threads = active_;
  timing.wall_nanos = nanos_between(start, Clock::now());
  for (unsigned w = 0; w < active_; ++w) {
    timing.wait_nanos += workers_[w].wait_nanos;
    timing.parked_waits += workers_[w].parked_waits;
  }
  // Every thread of the team lost the tail (the region could not end), so
  // count it once per thread.
  timing.wait_nanos += tail * active_;
  timing.parked_waits += tail > kLongWaitNanos;
  if (record) {
    add_boundary(timing);
    for (std::size_t i = 0; i < count; ++i) {
      timing.rounds = std::max(timing.rounds, instances[i]->rounds);
    }
    for (unsigned w = 0; w < active_; ++w) {
      for (std::size_t i = 0; i < count; ++i) timing.events += workers_[w].per[i].events;
    }
    adaptive_.record(timing);
    last_timing_ = timing;
  }
  for (std::size_t i = 0; i < count; ++i) {
    stats[i] = StepStats{};
    for (unsigned w = 0; w < active_; ++w) {
      stats[i].events += workers_[w].per[i].events;
      stats[i].cross_events += workers_[w].per[i].cross_events;
      stats[i].ready += workers_[w].per[i].ready;
      stats[i].queue_reads += workers_[w].per[i].queue_reads;
    }
    stats[i].rounds = instances[i]->rounds;
    stats[i].threads = active_;
    stats[i].parked_waits = timing.parked_waits;
    failures[i] = nullptr;
    try {
      instances[i]->rethrow_failure();
    } catch (...) {
      failures[i] = std::current_exception();
    }
  }
  // A decision window that ended before its step: its calendars and the
  // last round's notices know every pending event up to the step's end.
  if (record && count == 1 && failures[0] == nullptr &&
      windows[0].known_until() > windows[0].t_end) {
    continuable_ = instances[0];
  }
}

void ParallelEngine::add_boundary(StepTiming& timing) {
  timing.boundary_nanos = boundary_.wall_nanos;
  timing.wall_nanos += boundary_.wall_nanos;
  timing.wait_nanos += boundary_.wait_nanos;
  timing.parked_waits += boundary_.parked_waits;
  boundary_ = StepTiming{};
}

void ParallelEngine::record_serial_step(StepTiming timing) {
  timing.threads = 1;
  timing.rounds = 1;
  add_boundary(timing);
  active_ = 1;
  adaptive_.record(timing);
  last_timing_ = timing;
}

void ParallelEngine::maybe_stall(unsigned w) {
  if (stall_delay_.count() != 0 && w == stall_worker_) std::this_thread::sleep_for(stall_delay_);
}

void ParallelEngine::wait_at_barrier(Worker& me, Batch& batch) {
  if (!me.timed) {
    barrier_.arrive_and_wait([&] { end_round(batch); });
    return;
  }
  const Clock::time_point arrived = Clock::now();
  if (barrier_.arrive_and_wait([&] { end_round(batch); }) == WaitStage::kPark) ++me.parked_waits;
  me.round_start = Clock::now();
  me.wait_nanos += nanos_between(arrived, me.round_start);
}

void ParallelEngine::worker_step(unsigned w, Batch& batch) {
  Worker& me = workers_[w];
  maybe_stall(w);
  if (batch.continued != nullptr) {
    continue_slice(me, batch);
  } else {
    begin_slice(me, batch);
  }
  wait_at_barrier(me, batch);
  while (!batch.all_finished) {
    maybe_stall(w);
    const std::size_t ready = list_ready(me, batch);
    ExecutiveList& mine = *executive_[w];
    mine.push_batch(me.ready.data(), ready);
    mine.seal();
    // How long to wait for another worker's list to be sealed: its listing
    // takes about as long as mine, so twice my listing time, and at least
    // the spin budget. Past that the owner was likely preempted; it drains
    // its own list anyway (stealing only evens out the load), so we go on
    // to the barrier, which parks.
    std::int64_t steal_budget = WaitBudget::kSpinNanos;
    if (me.timed) {
      steal_budget = std::max<std::int64_t>(
          steal_budget, 2 * static_cast<std::int64_t>(nanos_between(me.round_start, Clock::now())));
    }
    // Drain my own list first, then steal from the others' (w+1, w+2, ...)
    // once their owners have sealed them: an entity stays with one worker
    // round after round, so its state and queue stay in that core's cache,
    // and stealing evens out the load. No barrier between listing and
    // draining: what a drain sends is at or after the horizon (>= now + L),
    // so it cannot make anything ready this round; whoever sends it counts
    // its time towards the next LB (emit) and wakes its owner next round.
    drain_list(me, batch, mine);
    steal(me, w, batch, steal_budget);
    wait_at_barrier(me, batch);
  }
}

std::size_t ParallelEngine::list_ready(Worker& me, Batch& batch) {
  for (auto& p : me.per) p.min = kNever;
  take_notices(me, batch);
  me.parity = round_ & 1;
  std::uint64_t* const bits = me.listed.data();
  for (std::size_t i = first_instance(me, batch); i < batch.count && batch.offsets[i] < me.hi;
       ++i) {
    ParallelInstance& inst = *batch.instances[i];
    if (inst.finished) continue;
    const std::uint64_t from = batch.offsets[i] - me.lo;  // may wrap; only sums use it
    std::uint64_t listed = 0;
    me.calendars[i].pop_before(inst.horizon, [&](EntityId e) {
      const std::uint64_t k = from + e;  // place in my slice
      const std::uint64_t bit = std::uint64_t{1} << (k & 63);
      listed += (bits[k >> 6] & bit) == 0;
      bits[k >> 6] |= bit;
    });
    // Everything else my calendar holds is at or after the horizon.
    me.per[i].min = me.calendars[i].earliest();
    me.per[i].queue_reads += listed;  // each listed entity's queue is read by its drain
  }
  EntityId* out = me.ready.data();  // sized to the slice in prepare()
  for (std::size_t word = 0; word < me.listed.size(); ++word) {
    for (std::uint64_t b = bits[word]; b != 0; b &= b - 1) {
      *out++ = static_cast<EntityId>(me.lo + word * 64 + lowest_set_bit(b));
    }
    bits[word] = 0;
  }
  return static_cast<std::size_t>(out - me.ready.data());
}

void ParallelEngine::steal(Worker& me, unsigned w, Batch& batch, std::int64_t budget_nanos) {
  // Visit every other list once, in the order w+1, w+2, ..., each as soon as
  // its owner has sealed it: a slow lister does not hold up the lists after
  // it (with many threads, someone is always last). Waiting for a seal ends
  // after `budget_nanos` (see worker_step); every owner drains its own list,
  // so skipping one loses no event.
  const unsigned t = active_;
  me.visited.assign(t, 0);
  me.visited[w] = 1;
  // Spinning keeps a preempted owner off its core when threads outnumber
  // cores: then only yield.
  const bool spin = barrier_.budget().spin_nanos > 0;
  Clock::time_point waiting_since{};
  unsigned idle = 0;
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
    if (progress) {
      idle = 0;
      continue;
    }
    // Read the clock every 64 idle passes (~20 ns a read).
    if (idle++ % 64 == 0) {
      const Clock::time_point now = Clock::now();
      if (idle == 1) {
        waiting_since = now;
      } else if (static_cast<std::int64_t>(nanos_between(waiting_since, now)) > budget_nanos) {
        if (me.timed) me.wait_nanos += nanos_between(waiting_since, now);
        return;
      }
    }
    if (spin) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  if (me.timed && idle != 0) me.wait_nanos += nanos_between(waiting_since, Clock::now());
}

void ParallelEngine::drain_list(Worker& me, Batch& batch, ExecutiveList& list) {
  // Claim ready entities in small batches until none is left. Batches shrink
  // with the list so that threads finish the round together.
  const std::size_t claim =
      std::clamp<std::size_t>(list.size_approx() / (4 * active_), 1, 32);
  const EntityId* first = nullptr;
  for (std::size_t n; (n = list.pop_batch(claim, &first)) != 0;) {
    for (std::size_t k = 0; k < n; ++k) {
      if (k + kPrefetchQueueAhead < n) {
        const EntityId ahead = first[k + kPrefetchQueueAhead];
        const std::size_t j = instance_of_[ahead];
        batch.instances[j]->prefetch_queue(static_cast<EntityId>(ahead - batch.offsets[j]));
      }
      if (k + kPrefetchAhead < n) {
        const EntityId ahead = first[k + kPrefetchAhead];
        const std::size_t j = instance_of_[ahead];
        batch.instances[j]->prefetch(static_cast<EntityId>(ahead - batch.offsets[j]));
      }
      const EntityId g = first[k];
      const std::size_t i = instance_of_[g];
      ParallelInstance& inst = *batch.instances[i];
      me.base = batch.offsets[i];
      drain_entity(me, inst, i, static_cast<EntityId>(g - me.base), inst.horizon);
      list.done(g);
    }
  }
}

std::size_t ParallelEngine::first_instance(const Worker& me, const Batch& batch) const {
  return me.lo < me.hi ? instance_of_[me.lo] : batch.count;
}

void ParallelEngine::take_notices(Worker& me, Batch& batch) {
  const unsigned previous = (round_ - 1) & 1;
  for (unsigned v = 0; v < active_; ++v) {
    std::vector<Notice>& notices = workers_[v].outbox[me.index][previous];
    for (const Notice& n : notices) {
      const std::size_t i = instance_of_[n.entity];
      if (batch.instances[i]->finished) continue;
      me.calendars[i].add(n.time, static_cast<EntityId>(n.entity - batch.offsets[i]));
    }
    notices.clear();  // v writes this parity again only after the next barrier
  }
}

void ParallelEngine::begin_slice(Worker& me, Batch& batch) {
  me.parity = round_ & 1;
  for (std::size_t i = first_instance(me, batch); i < batch.count && batch.offsets[i] < me.hi;
       ++i) {
    const StepWindow& window = *batch.instances[i]->window;
    me.calendars[i].start(window.t_begin, window.known_until(), batch.instances[i]->lookahead);
  }
  for (std::size_t i = first_instance(me, batch); i < batch.count && batch.offsets[i] < me.hi;
       ++i) {
    ParallelInstance& inst = *batch.instances[i];
    const StepWindow& window = *inst.window;
    const std::uint64_t base = batch.offsets[i];
    const auto lo = static_cast<EntityId>(std::max(me.lo, base) - base);
    const auto hi = static_cast<EntityId>(std::min(me.hi, batch.offsets[i + 1]) - base);
    me.inst = &inst;
    me.inst_index = i;
    me.base = base;
    // The first round's LB: every pending event is at or after t_begin (the
    // last step handled everything before it; this phase schedules at
    // >= now), so t_begin bounds them all without a pass over every entity.
    me.per[i].min = std::min(me.per[i].min, window.t_begin);
    for (EntityId e = lo; e < hi; ++e) {
      // The begin read below needs e's queue line; start loading a later one.
      if (e + kPrefetchQueueAhead < hi) inst.prefetch_queue(e + kPrefetchQueueAhead);
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
      // The begin read: what e held before this step (heap top, inbox
      // bound) and the self-events it just scheduled go into its calendar
      // entry; what others send it from now on comes with a notice.
      LocalQueue& q = inst.queues[e];
      if (q.settle_inbox(window.t_begin) || me.local_pushes != pushed) inst.publish_top(e);
      me.calendars[i].add(q.earliest(), e);
    }
    me.per[i].queue_reads += hi - lo;
  }
}

void ParallelEngine::continue_slice(Worker& me, Batch& batch) {
  // One instance (continue_step). Its calendars hold my entities' entries up
  // to the step's end; the notices of the last window's last round are in
  // the outboxes of that round's parity (round_ - 1), which the round after
  // this phase's barrier would not read: take them now.
  me.parity = round_ & 1;
  take_notices(me, batch);
  ParallelInstance& inst = *batch.instances[0];
  me.inst = &inst;
  me.inst_index = 0;
  me.base = 0;
  for (const EntityId e : *batch.continued) {
    if (e < me.lo || e >= me.hi) continue;
    // insert() pushed these between the windows, and published the tops.
    me.calendars[0].add(inst.queues[e].earliest(), e);
  }
  // Every pending event is at or after the window's begin (the last window
  // handled everything before it): the first round's LB.
  me.per[0].min = std::min(me.per[0].min, inst.window->t_begin);
}

void ParallelEngine::drain_entity(Worker& me, ParallelInstance& inst, std::size_t i, EntityId e,
                                  double horizon) {
  LocalQueue& q = inst.queues[e];
  const StepWindow& window = *inst.window;
  me.inst = &inst;
  me.inst_index = i;
  me.current = e;
  q.drain();
  // Counted where events are handled: an entity listed with nothing below
  // the horizon (after a failure stopped it) is not ready.
  if (q.top_time() < horizon) ++me.per[i].ready;
  while (q.top_time() < horizon) {
    // Handled where its producer wrote it; the node goes back to my pool after.
    EventNode* node = q.pop();
    const Event& event = node->event;
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
      me.pool.release(node);
      return;
    }
    ++me.per[i].events;
    if (event.source != event.target) ++me.per[i].cross_events;
    me.pool.release(node);
  }
  inst.publish_top(e);
  me.per[i].min = std::min(me.per[i].min, q.published_top());
  // What e holds now; what others send it later comes with a notice.
  me.wake(e, q.published_top());
}

void ParallelEngine::end_round(Batch& batch) {
  bool all_finished = true;
  for (std::size_t i = 0; i < batch.count; ++i) {
    ParallelInstance& inst = *batch.instances[i];
    if (inst.finished) continue;
    double lb = kNever;
    for (unsigned w = 0; w < active_; ++w) lb = std::min(lb, workers_[w].per[i].min);
    // acquire: pairs with fail()'s release (the barrier orders it anyway).
    if (inst.failed.load(std::memory_order_acquire) || !(lb < inst.window->t_end)) {
      inst.finished = true;
      continue;
    }
    ++inst.rounds;
    inst.horizon = safe_horizon(lb, inst.lookahead, inst.window->t_end);
    all_finished = false;
  }
  for (unsigned w = 0; w < active_; ++w) executive_[w]->reset();
  batch.all_finished = all_finished;
  ++round_;
}

void ParallelEngine::initialize(ParallelInstance& inst) {
  continuable_ = nullptr;
  const std::uint64_t n = inst.num_entities, t = pool_.size();
  balance_node_pools();  // clear() freed the instance's nodes into the caller's pool
  pool_.run([&](unsigned w) {
    Worker& me = workers_[w];
    me.inst = &inst;
    me.inst_index = 0;
    me.notify = false;  // the next step's begin read finds these events
    me.per.assign(1, Worker::PerInstance{kNever, 0, 0, 0, 0, 0});
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

void ParallelEngine::insert_lists(ParallelInstance& inst, const std::vector<Event>* lists,
                                  std::size_t count, std::vector<EntityId>& touched) {
  // As parallel_for: one thread while the adaptive pool runs on one.
  const unsigned team = std::max(1u, adaptive_.threads());
  const std::uint64_t n = inst.num_entities;
  std::exception_ptr failure;
  std::mutex mutex;
  const auto work = [&](unsigned w) {
    if (w >= team) return;
    Worker& me = workers_[w];
    me.inserted.clear();
    // My targets only: their queues are mine for this region, so the
    // owner-private push (from my own node pool) is safe; each target's
    // events go in in the lists' order, as one thread would push them.
    const auto lo = static_cast<EntityId>(n * w / team);
    const auto hi = static_cast<EntityId>(n * (w + 1) / team);
    try {
      for (std::size_t k = 0; k < count; ++k) {
        for (const Event& event : lists[k]) {
          if (event.target < lo || event.target >= hi) continue;
          inst.queues[event.target].push_local(event, me.pool);
          inst.publish_top(event.target);
          me.inserted.push_back(event.target);
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  if (team == 1) {
    work(0);
  } else {
    pool_.run([&](unsigned w) { work(w); });
  }
  for (unsigned w = 0; w < team; ++w) {
    touched.insert(touched.end(), workers_[w].inserted.begin(), workers_[w].inserted.end());
  }
  if (failure) std::rethrow_exception(failure);
}

void ParallelEngine::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  // Stepping on one thread (the adaptive pool shed the others): so does the
  // boundary work, which would otherwise wait for the busy cores too.
  if (adaptive_.threads() == 1) {
    const Clock::time_point start = Clock::now();
    for (std::size_t i = 0; i < n; ++i) fn(i);
    // The boundary's time counts with the next step, as on the pool below,
    // so that time per event compares alike across thread counts.
    boundary_.wall_nanos += nanos_between(start, Clock::now());
    return;
  }
  // A failure stops the work after it but not before it: every index below
  // the lowest failing one still runs, so the error raised is the one the
  // serial loop above raises (the lowest failing index), whatever the timing.
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> stop_at{n};  // the lowest failing index so far
  std::mutex mutex;
  std::exception_ptr failure;
  std::size_t failure_index = n;
  const std::size_t chunk = std::max<std::size_t>(1, n / (8 * pool_.size()));
  const Clock::time_point start = Clock::now();
  const std::uint64_t tail = pool_.run([&](unsigned) {
    for (;;) {
      // relaxed: next only hands out indices (in increasing order, so every
      // index below a failing one is handed out before it); stop_at only
      // skips work (the failure itself is read after run() returns, which
      // orders it).
      const std::size_t lo = next.fetch_add(chunk, std::memory_order_relaxed);
      if (lo >= stop_at.load(std::memory_order_relaxed)) return;
      for (std::size_t i = lo; i < std::min(n, lo + chunk); ++i) {
        if (i >= stop_at.load(std::memory_order_relaxed)) return;
        try {
          fn(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (i < failure_index) {
            failure_index = i;
            failure = std::current_exception();
            stop_at.store(i, std::memory_order_relaxed);
          }
          return;
        }
      }
    }
  });
  // For the adaptive pool (see boundary_): the late workers held up the
  // whole team for the tail.
  boundary_.wall_nanos += nanos_between(start, Clock::now());
  boundary_.wait_nanos += tail * pool_.size();
  boundary_.parked_waits += tail > kLongWaitNanos;
  if (failure) std::rethrow_exception(failure);
}

}  // namespace seer
