// A min-heap of events in key order that moves 24-byte keys, not events.
//
// Events are ~100 bytes; a binary heap of them spends most of its time
// copying records up and down (callgrind: ~600 instructions per event for a
// 16k-event heap). Here the heap holds (time, source, seq, slot) and the
// events stay put in a slab whose free slots are reused, so after warm-up
// push and pop allocate nothing. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "seer/event.hpp"

namespace seer {

class EventHeap {
 public:
  void push(const Event& e) {
    std::uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
      slab_[slot] = e;
    } else {
      slot = static_cast<std::uint32_t>(slab_.size());
      slab_.push_back(e);
    }
    heap_.push_back(Entry{e.time, e.source, slot, e.seq});
    std::push_heap(heap_.begin(), heap_.end(), After{});
  }

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return slab_[heap_.front().slot]; }
  double top_time() const {
    return heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.front().time;
  }

  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), After{});
    const std::uint32_t slot = heap_.back().slot;
    heap_.pop_back();
    free_.push_back(slot);
    // The next event to pop has usually waited long enough to leave the
    // cache; start loading it while the caller handles this one.
    if (!heap_.empty()) __builtin_prefetch(&slab_[heap_.front().slot]);
    return slab_[slot];
  }

  // Address of the event pop() would return (null when empty), for prefetching.
  const Event* top_address() const { return heap_.empty() ? nullptr : &slab_[heap_.front().slot]; }
  // Address of the first heap key (null when empty), for prefetching.
  const void* front_address() const { return heap_.empty() ? nullptr : heap_.data(); }

  void clear() {
    heap_.clear();
    slab_.clear();
    free_.clear();
  }

  // Visits every pending event, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const Entry& entry : heap_) fn(slab_[entry.slot]);
  }

 private:
  struct Entry {
    double time;
    EntityId source;
    std::uint32_t slot;
    std::uint64_t seq;
  };
  // "a comes after b" in the key order (std heaps are max-heaps).
  struct After {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.source != b.source) return a.source > b.source;
      return a.seq > b.seq;
    }
  };
  std::vector<Entry> heap_;
  std::vector<Event> slab_;
  std::vector<std::uint32_t> free_;
};

}  // namespace seer
