// A min-priority queue of event nodes in key order (time, source, seq).
//
// The parallel executor's per-entity queue. It holds 24-byte keys pointing at
// the nodes the events arrived in: a drain moves node pointers, not events,
// and the handler reads the event where its producer wrote it. (EventHeap,
// which copies each event into a slab, cost a 96-byte copy on drain and
// another on pop.) The seq is not in the key: it is read from the node only
// when two keys tie on (time, source), which is rare.
//
// An entity mostly holds a few events (PCS: 16-32), so the keys are kept as a
// sorted run, latest first, while there are at most kRunMax of them: a pop
// takes the last key (no sift down, whose data-dependent branches
// mispredicted: the binary heap's pop and push were ~14% of a PCS parallel
// step), a push walks in from the end, moving the earlier keys up one (a new
// event is usually earlier than most pending ones, so it moves only a few).
// Above kRunMax keys the array becomes a binary heap (a run reversed is
// one), and a sorted run again at kHeapMin keys or fewer, so a crowded
// entity costs O(log n) a push.
// Not thread-safe; owns no node (whoever pops one hands it back to a pool).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>

#include "node_pool.hpp"
#include "compiler.hpp"

namespace seer {

class NodeHeap {
 public:
  static constexpr std::uint32_t kRunMax = 32;  // a sorted run up to this many keys
  static constexpr std::uint32_t kHeapMin = 8;  // a heap down to this many is sorted again

  NodeHeap() = default;
  NodeHeap(const NodeHeap&) = delete;
  NodeHeap& operator=(const NodeHeap&) = delete;

  // Adds `node`; the queue holds it until pop() or clear(). Allocates only
  // when the key array grows (strong guarantee: on bad_alloc nothing changed).
  void push(EventNode* node) {
    if (size_ == capacity_) grow();
    const Key key{node->event.time, node->event.source, node};
    Key* keys = keys_.get();
    if (!sorted_) {
      keys[size_++] = key;
      std::push_heap(keys, keys + size_, After{});
      return;
    }
    // The run is latest first. A new event is mostly earlier than most
    // pending ones, so the walk starts at the earliest end.
    Key* at = keys + size_;
    while (at != keys && After{}(key, at[-1])) {
      *at = at[-1];
      --at;
    }
    *at = key;
    if (++size_ > kRunMax) to_heap();
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const Event& top() const { return front().node->event; }
  double top_time() const {
    return size_ == 0 ? std::numeric_limits<double>::infinity() : front().time;
  }

  // Removes the earliest node and hands it to the caller. Not when empty.
  EventNode* pop() {
    EventNode* node;
    if (sorted_) {
      node = keys_[--size_].node;
    } else {
      std::pop_heap(keys_.get(), keys_.get() + size_, After{});
      node = keys_[--size_].node;
      if (size_ <= kHeapMin) to_run();
    }
    // The next event to pop has usually waited long enough to leave the
    // cache; start loading it while the caller handles this one.
    if (size_ != 0) SEER_PREFETCH(front().node);
    return node;
  }

  // Address of the event pop() would return (null when empty), for prefetching.
  const Event* top_address() const { return size_ == 0 ? nullptr : &front().node->event; }
  // Address of the earliest key (null when empty), for prefetching.
  const void* front_address() const { return size_ == 0 ? nullptr : &front(); }

  // Hands every node to `pool`; keeps the key array.
  void clear(NodePool& pool) {
    for (std::uint32_t i = 0; i < size_; ++i) pool.release(keys_[i].node);
    size_ = 0;
    sorted_ = true;
  }
  // Frees the key array of an empty queue (a later push allocates again).
  void release_storage() {
    if (size_ != 0) return;
    keys_.reset();
    capacity_ = 0;
    sorted_ = true;
  }

  // Visits every pending event, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::uint32_t i = 0; i < size_; ++i) fn(static_cast<const Event&>(keys_[i].node->event));
  }
  // Visits every node, in no particular order.
  template <class Fn>
  void for_each_node(Fn&& fn) const {
    for (std::uint32_t i = 0; i < size_; ++i) fn(keys_[i].node);
  }
  // Drops every key without touching its node (their events are moving
  // elsewhere with their blocks: ParallelEngine::move_out_events); keeps the
  // key array, so that as many nodes can be pushed again without allocating.
  void forget() {
    size_ = 0;
    sorted_ = true;
  }

 private:
  struct Key {
    double time;
    EntityId source;
    EventNode* node;
  };
  static_assert(sizeof(Key) == 24, "three words per key");
  // "a comes after b" in the key order (std heaps are max-heaps).
  struct After {
    bool operator()(const Key& a, const Key& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.source != b.source) return a.source > b.source;
      return a.node->event.seq > b.node->event.seq;
    }
  };

  // The earliest key: the run's last, the heap's first. Not when empty.
  const Key& front() const { return sorted_ ? keys_[size_ - 1] : keys_[0]; }

  // Doubles up to kRunMax / 2 keys, then grows by half: an entity mostly
  // holds a steady number of events (PCS: one per phone, 16 a cell), and
  // doubling 16 to 32 for one event more left half of most arrays empty
  // (~12 MB of a parallel PCS 256x256 env).
  void grow() {
    const std::uint64_t wanted = capacity_ == 0             ? 4
                                 : capacity_ < kRunMax / 2 ? 2 * std::uint64_t{capacity_}
                                                           : capacity_ + capacity_ / 2;
    if (wanted > std::numeric_limits<std::uint32_t>::max()) {
      throw std::length_error("NodeHeap: more than 2^32 events");
    }
    const auto capacity = static_cast<std::uint32_t>(wanted);
    std::unique_ptr<Key[]> keys(new Key[capacity]);
    std::copy(keys_.get(), keys_.get() + size_, keys.get());
    keys_ = std::move(keys);
    capacity_ = capacity;
  }
  // Earliest first, a run is a heap in After's order.
  void to_heap() {
    std::reverse(keys_.get(), keys_.get() + size_);
    sorted_ = false;
  }
  void to_run() {
    std::sort(keys_.get(), keys_.get() + size_, After{});  // latest first
    sorted_ = true;
  }

  std::unique_ptr<Key[]> keys_;
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = 0;
  // The keys are a sorted run, latest first (pop takes the last), or a heap.
  bool sorted_ = true;
};

}  // namespace seer
