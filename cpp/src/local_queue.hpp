// Layer 1 of the dual-layer event queue: one LocalQueue per entity.
//
// Producers (any worker) push event nodes into a lock-free MPSC inbox (a CAS
// pushed intrusive stack). The single consumer, the worker holding the
// entity, drains the inbox into a private min-heap of those nodes in key
// order and pops from it without atomics; the event stays in the node its
// producer wrote. Inbox order does not matter: the heap restores the
// (time, source, seq) order. The whole queue is one cache line, which also
// holds the heap top the holder publishes (publish_top()) for the step's
// begin read and for prefetching.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "node_heap.hpp"
#include "compiler.hpp"
#include "node_pool.hpp"
#include "seer/event.hpp"

namespace seer {

// Time as ordered bits: for non-negative doubles (event times are >= 0) the
// IEEE bit patterns order like the values, so an atomic integer min works.
inline std::uint64_t time_bits(double t) {
  std::uint64_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  return bits;
}
inline double bits_time(std::uint64_t bits) {
  double t;
  std::memcpy(&t, &bits, sizeof t);
  return t;
}
inline const std::uint64_t kNeverBits = time_bits(std::numeric_limits<double>::infinity());

class alignas(64) LocalQueue {
 public:
  LocalQueue() = default;
  LocalQueue(const LocalQueue&) = delete;
  LocalQueue& operator=(const LocalQueue&) = delete;

  // -- Producer side.
  // Hands `node` to the entity's inbox. Thread-safe, lock-free (retries a
  // CAS under contention); never blocks or allocates.
  void push_remote(EventNode* node) {
    // Read the time before the push: once the CAS succeeds the node belongs
    // to the consumer, which may drain it and hand it to its worker's pool for
    // reuse at once; reading node->event after the CAS was a data race (found
    // by ThreadSanitizer in test_local_queue / test_parallel_phold).
    const std::uint64_t bits = time_bits(node->event.time);
    // relaxed: only a first guess for the CAS below, which re-reads on failure.
    node->next = inbox_.load(std::memory_order_relaxed);
    // acq_rel: release hands the node (and its event) to the consumer;
    // acquire orders our inbox_min_ update after a consumer reset that
    // preceded the exchange we read from. relaxed on failure: we just retry.
    while (!inbox_.compare_exchange_weak(node->next, node, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
    }
    // After the push, lower the inbox bound (CAS min). A stale, too-low bound
    // is harmless (the entity is looked at once more for nothing); a missing
    // one is impossible because the bound is lowered after the push and
    // reset by the consumer before it takes the inbox.
    // relaxed load: a first guess for the CAS. acq_rel CAS: orders the
    // bound after our push (release) and after the reset we overwrite
    // (acquire); relaxed on failure: we re-compare and retry.
    std::uint64_t cur = inbox_min_.load(std::memory_order_relaxed);
    while (bits < cur && !inbox_min_.compare_exchange_weak(cur, bits, std::memory_order_acq_rel,
                                                           std::memory_order_relaxed)) {
    }
  }

  // -- Consumer side: only the thread holding the entity. Not thread-safe;
  // no atomics but in drain(). The heap may allocate when it grows.
  // Moves every inbox node into the heap. Does not block; allocates only if
  // the heap grows.
  void drain() {
    // relaxed: an empty-check only; a node pushed just after is drained next time.
    if (inbox_.load(std::memory_order_relaxed) == nullptr) return;
    take_inbox();
  }
  // At a step's begin (every pending event is at or after t_begin): a bound
  // below t_begin is stale (a producer lowers it after its push, so it can
  // outlive the node's drain); drains the inbox, which makes it exact again.
  // Returns whether it drained. Holder only; allocates only if the heap grows.
  bool settle_inbox(double t_begin) {
    if (!(inbox_bound() < t_begin)) return false;
    take_inbox();
    return true;
  }
  // Adds a copy of `event` (a self-event, or an event inserted between
  // steps) in a node from `pool`. If the heap cannot grow, the node goes back
  // to `pool` and the exception propagates (nothing changed).
  void push_local(const Event& event, NodePool& pool) {
    EventNode* node = pool.allocate(event);
    try {
      heap_.push(node);
    } catch (...) {
      pool.release(node);
      throw;
    }
  }
  bool empty_local() const { return heap_.empty(); }
  const Event& top() const { return heap_.top(); }
  // The earliest heap node; the caller hands it to a NodePool once its event
  // is handled.
  EventNode* pop() { return heap_.pop(); }
  // Time of the earliest heap event (+inf when empty).
  double top_time() const { return heap_.top_time(); }
  // Where the earliest heap event lives (null when empty), for prefetching.
  const Event* top_address() const { return heap_.top_address(); }

  // -- Published top (parallel executor). publish_top() by the holder when
  // it lets go of the entity; the copied values are read by the same thread
  // or by others after a barrier (the begin read, prefetches). None of
  // these blocks or allocates.
  // Copies the heap's top time and address to the published fields. Holder only.
  void publish_top() {
    published_top_ = heap_.top_time();
    published_event_ = heap_.top_address();
  }
  // min(published top, inbox bound): when the entity's next event may be.
  // Thread-safe for the inbox bound; the published top as of the last barrier.
  double earliest() const {
    // acquire: a bound lowered by a producer comes with its pushed node.
    const double inbox = bits_time(inbox_min_.load(std::memory_order_acquire));
    return published_top_ < inbox ? published_top_ : inbox;
  }
  // Holder only (or after a barrier).
  double published_top() const { return published_top_; }
  // Starts loading the earliest heap event and the heap's keys (a hint). Thread-safe.
  SEER_PREFETCH_HELPER void prefetch_heap() const {
    if (published_event_ != nullptr) {
      SEER_PREFETCH(published_event_);
      SEER_PREFETCH(heap_.front_address());
    }
  }
  // Lower bound on the time of anything in the inbox (+inf when empty).
  // Thread-safe. acquire: as in earliest().
  double inbox_bound() const { return bits_time(inbox_min_.load(std::memory_order_acquire)); }

  // -- Outside a step (single-threaded; not thread-safe). None of these
  // allocates. clear() hands every node, inbox and heap, to `pool`.
  void clear(NodePool& pool) {
    // relaxed: no producer runs outside a step.
    for (EventNode* n = inbox_.exchange(nullptr, std::memory_order_relaxed); n != nullptr;) {
      EventNode* next = n->next;
      pool.release(n);
      n = next;
    }
    inbox_min_.store(kNeverBits, std::memory_order_relaxed);
    heap_.clear(pool);
  }
  // Frees what clear() keeps for reuse (the heap's key array). Empty queue only.
  void release_storage() { heap_.release_storage(); }
  // For moving every event out with the node blocks (ParallelEngine::
  // move_out_events), after drain(): visits the heap's nodes; forgets them
  // (the key array stays); takes a node back into the heap (no allocation
  // while it holds no more nodes than before forget_nodes()).
  template <class Fn>
  void for_each_node(Fn&& fn) const { heap_.for_each_node(fn); }
  void forget_nodes() { heap_.forget(); }
  void adopt(EventNode* node) { heap_.push(node); }
  template <class Fn>
  void for_each(Fn&& fn) const {
    heap_.for_each(fn);
    // acquire: the nodes' events were written before the producers' release CAS.
    for (EventNode* n = inbox_.load(std::memory_order_acquire); n != nullptr; n = n->next) {
      fn(n->event);
    }
  }
  std::size_t size() const {
    std::size_t n = heap_.size();
    // acquire: as in for_each().
    for (EventNode* p = inbox_.load(std::memory_order_acquire); p != nullptr; p = p->next) ++n;
    return n;
  }

 private:
  void take_inbox() {
    // seq_cst: the reset must be ordered before the exchange below (a
    // store-load pair, which only seq_cst orders), so that a producer whose
    // node we miss lowers the bound again afterwards.
    inbox_min_.store(kNeverBits, std::memory_order_seq_cst);
    // acquire: pairs with the producers' release CAS, so the events are visible.
    EventNode* n = inbox_.exchange(nullptr, std::memory_order_acq_rel);
    while (n != nullptr) {
      EventNode* next = n->next;
      heap_.push(n);
      n = next;
    }
  }

  std::atomic<EventNode*> inbox_{nullptr};
  std::atomic<std::uint64_t> inbox_min_{kNeverBits};  // bits of a bound on the inbox's times
  // The heap's earliest time and event as of the last publish_top(): what the
  // step's begin read and the prefetches read, in the same cache line as
  // the inbox bound, so that one line brings in what a drain touches first.
  double published_top_ = std::numeric_limits<double>::infinity();
  const Event* published_event_ = nullptr;
  NodeHeap heap_;  // owner-private, key order
};
// A begin read or a drain touches one line of an entity's queue (plus its buffer).
static_assert(sizeof(LocalQueue) == 64, "LocalQueue is one cache line");

}  // namespace seer
