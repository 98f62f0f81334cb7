// Layer 2 of the dual-layer event queue: the list of ready entities.
//
// Entities, never single events: a worker that pops an entity drains all of
// its safe events (docs/runtime.md, "Executors"). Each entity is on the list at most once at
// a time: push() first claims the entity's flag with a CAS (idle -> queued),
// and done() releases it after the worker is finished with the entity.
//
// Within one horizon round the executor pushes, then pops (other threads
// after a barrier, or once the pusher has seal()ed the list), so pop() is a
// single fetch_add: lock-free, no ABA, no per-item CAS loop.
// Protocol (the executor keeps it; nothing checks it): push only between a
// reset() and the first pop of a round (a failed pop moves head past tail, so
// later pushes would be lost), and at most capacity() accepted pushes per
// round (each entity at most once, so the entity count is the capacity).
//
// A list covers the ids [first_id, first_id + capacity): the parallel engine
// keeps one per worker for the worker's slice of entities, so that an entity
// is drained by the same worker round after round (its state and queue stay
// in that core's cache) and other workers only steal what is left.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "seer/event.hpp"

namespace seer {

// Layout: the read-mostly fields (id range, slot and flag arrays) share the
// first cache line; head_ (bumped by every popper) has the second to itself;
// tail_ and sealed_ (written by the pusher, read together by stealers) share
// the third. Checked by the static_asserts in the constructor.
class alignas(64) ExecutiveList {
 public:
  // Not thread-safe; allocates (capacity slots and flags).
  explicit ExecutiveList(std::size_t capacity, EntityId first_id = 0)
      : first_id_(first_id),
        slots_(capacity),
        flags_(std::make_unique<std::atomic<std::uint8_t>[]>(capacity)) {
    static_assert(alignof(ExecutiveList) == 64, "ExecutiveList starts a cache line");
    static_assert(offsetof(ExecutiveList, head_) == 64, "head_ has the second line to itself");
    static_assert(offsetof(ExecutiveList, tail_) == 128, "tail_ starts the third line");
    static_assert(offsetof(ExecutiveList, sealed_) < 192, "sealed_ shares tail_'s line");
    static_assert(sizeof(ExecutiveList) == 192, "ExecutiveList is three cache lines");
    // relaxed: the list is not shared yet; handing it to the workers (the
    // pool's run()) orders these stores before any use.
    for (std::size_t i = 0; i < capacity; ++i) flags_[i].store(kIdle, std::memory_order_relaxed);
  }

  // Returns false (and pushes nothing) if e is already queued. Thread-safe,
  // lock-free; does not block or allocate.
  bool push(EntityId e) {
    std::uint8_t expected = kIdle;
    // acq_rel: claiming the flag orders us after the previous holder's done().
    // relaxed on failure: we learn only that e is queued, and touch nothing of it.
    if (!flag(e).compare_exchange_strong(expected, kQueued, std::memory_order_acq_rel,
                                           std::memory_order_relaxed)) {
      return false;
    }
    // relaxed: slots are read only after seal() or the round barrier, which order them.
    slots_[tail_.fetch_add(1, std::memory_order_relaxed)] = e;
    return true;
  }

  // Claims each of ids[0..n) (CAS on its flag) and appends the claimed ones
  // with a single fetch_add; returns how many were pushed (ids[0..kept) are
  // then the pushed ones). Thread-safe, lock-free; does not block or allocate.
  std::size_t push_batch(EntityId* ids, std::size_t n) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint8_t expected = kIdle;
      // acq_rel / relaxed on failure: as in push().
      if (flag(ids[i]).compare_exchange_strong(expected, kQueued, std::memory_order_acq_rel,
                                                 std::memory_order_relaxed)) {
        ids[kept++] = ids[i];
      }
    }
    if (kept == 0) return 0;
    // relaxed: as in push(); seal() or the barrier publishes the slots.
    const std::size_t at = tail_.fetch_add(kept, std::memory_order_relaxed);
    for (std::size_t i = 0; i < kept; ++i) slots_[at + i] = ids[i];
    return kept;
  }

  // False when empty. Thread-safe once pushing has finished (after seal() or
  // a barrier); lock-free, does not block or allocate.
  bool pop(EntityId& e) {
    // relaxed: only claims an index; the slots were ordered by seal()/the
    // barrier, and pushing has ended, so tail_ no longer moves.
    const std::size_t i = head_.fetch_add(1, std::memory_order_relaxed);
    if (i >= tail_.load(std::memory_order_relaxed)) return false;
    e = slots_[i];
    return true;
  }

  // Claims up to `max` entities at once (one fetch_add): [*first, *first + n).
  // Returns n (0 when empty). Thread-safe once pushing has finished;
  // lock-free, does not block or allocate.
  std::size_t pop_batch(std::size_t max, const EntityId** first) {
    // relaxed (all three): as in pop(); the early head_ check only avoids a
    // useless fetch_add on an empty list (a stale value just takes that path).
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (head_.load(std::memory_order_relaxed) >= tail) return 0;
    const std::size_t i = head_.fetch_add(max, std::memory_order_relaxed);
    if (i >= tail) return 0;
    *first = slots_.data() + i;
    return std::min(max, tail - i);
  }

  // The popper is finished with e; it may be pushed again. Thread-safe;
  // does not block or allocate.
  // release: what the popper did to e happens before the next push()'s claim.
  void done(EntityId e) { flag(e).store(kIdle, std::memory_order_release); }

  // Empties the list for the next round. Between barriers only (no other
  // thread may use the list); does not allocate.
  void reset() {
    // relaxed: the barrier that ends this phase orders these stores.
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
    sealed_.store(false, std::memory_order_relaxed);
  }

  // The pusher is done for this round: other threads may pop from now on.
  // Lets an owner drain its own list while others still push to theirs,
  // without a barrier between pushing and popping. Only the pushing thread;
  // does not block or allocate.
  // release: the pushed slots and tail_ happen before a stealer's sealed().
  void seal() { sealed_.store(true, std::memory_order_release); }
  // Thread-safe; does not block or allocate.
  // acquire: pairs with seal(), so the pushed slots are visible.
  bool sealed() const { return sealed_.load(std::memory_order_acquire); }

  // Entities pushed and not yet popped; a hint (racy while others pop).
  // Thread-safe; does not block or allocate.
  std::size_t size_approx() const {
    // relaxed: a sizing hint; no data is read on its strength.
    const std::size_t t = tail_.load(std::memory_order_relaxed);
    const std::size_t h = head_.load(std::memory_order_relaxed);
    return h >= t ? 0 : t - h;
  }
  // Thread-safe (constant after construction).
  std::size_t capacity() const { return slots_.size(); }
  EntityId first_id() const { return first_id_; }

 private:
  static constexpr std::uint8_t kIdle = 0;
  static constexpr std::uint8_t kQueued = 1;
  std::atomic<std::uint8_t>& flag(EntityId e) { return flags_[e - first_id_]; }
  EntityId first_id_;
  std::vector<EntityId> slots_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> flags_;
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
  std::atomic<bool> sealed_{false};
};

}  // namespace seer
