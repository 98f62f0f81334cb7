// A min-heap of event nodes in key order (time, source, seq).
//
// The parallel executor's per-entity heap. It holds 24-byte keys pointing at
// the nodes the events arrived in: a drain moves node pointers, not events,
// and the handler reads the event where its producer wrote it. (EventHeap,
// which copies each event into a slab, cost a 96-byte copy on drain and
// another on pop.) The seq is not in the key: it is read from the node only
// when two keys tie on (time, source), which is rare.
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
  NodeHeap() = default;
  NodeHeap(const NodeHeap&) = delete;
  NodeHeap& operator=(const NodeHeap&) = delete;

  // Adds `node`; the heap holds it until pop() or clear(). Allocates only
  // when the key array grows (strong guarantee: on bad_alloc nothing changed).
  void push(EventNode* node) {
    if (size_ == capacity_) grow();
    keys_[size_++] = Key{node->event.time, node->event.source, node};
    std::push_heap(keys_.get(), keys_.get() + size_, After{});
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const Event& top() const { return keys_[0].node->event; }
  double top_time() const {
    return size_ == 0 ? std::numeric_limits<double>::infinity() : keys_[0].time;
  }

  // Removes the earliest node and hands it to the caller. Not when empty.
  EventNode* pop() {
    std::pop_heap(keys_.get(), keys_.get() + size_, After{});
    EventNode* node = keys_[--size_].node;
    // The next event to pop has usually waited long enough to leave the
    // cache; start loading it while the caller handles this one.
    if (size_ != 0) SEER_PREFETCH(keys_[0].node);
    return node;
  }

  // Address of the event pop() would return (null when empty), for prefetching.
  const Event* top_address() const { return size_ == 0 ? nullptr : &keys_[0].node->event; }
  // Address of the first key (null when empty), for prefetching.
  const void* front_address() const { return size_ == 0 ? nullptr : keys_.get(); }

  // Hands every node to `pool`; keeps the key array.
  void clear(NodePool& pool) {
    for (std::uint32_t i = 0; i < size_; ++i) pool.release(keys_[i].node);
    size_ = 0;
  }
  // Frees the key array of an empty heap (a later push allocates again).
  void release_storage() {
    if (size_ != 0) return;
    keys_.reset();
    capacity_ = 0;
  }

  // Visits every pending event, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::uint32_t i = 0; i < size_; ++i) fn(static_cast<const Event&>(keys_[i].node->event));
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

  void grow() {
    const std::uint32_t capacity = capacity_ == 0 ? 4 : capacity_ * 2;
    if (capacity <= capacity_) throw std::length_error("NodeHeap: more than 2^32 events");
    std::unique_ptr<Key[]> keys(new Key[capacity]);
    std::copy(keys_.get(), keys_.get() + size_, keys.get());
    keys_ = std::move(keys);
    capacity_ = capacity;
  }

  std::unique_ptr<Key[]> keys_;
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = 0;
};

}  // namespace seer
