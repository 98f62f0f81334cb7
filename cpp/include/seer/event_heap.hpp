// A min-heap of events in key order that moves 16-byte keys, not events.
//
// Events are ~100 bytes; a binary heap of them spends most of its time
// copying records up and down (callgrind: ~600 instructions per event for a
// 16k-event heap). Here the heap holds (time, source, slot) and the events
// stay put in a slab whose free slots are reused, so after warm-up push and
// pop allocate nothing. The time is kept as an integer with the same order
// (one integer compare decides almost every comparison); the third part of
// the key, seq, is read from the slab only when time and source tie.
//
// The serial loop pops lazily (pop_lazy, then settle): the first event the
// handler pushes takes the popped key's place in one sift, instead of a pop
// sift and a push sift.
//
// Keys, slab and free list share one buffer: the parallel executor keeps one
// heap per entity, most holding a handful of events, and three separate
// allocations per entity meant three scattered cache misses per visit.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include "seer/event.hpp"
#include "seer/time_key.hpp"

namespace seer {

class EventHeap {
 public:
  EventHeap() = default;
  EventHeap(const EventHeap&) = delete;
  EventHeap& operator=(const EventHeap&) = delete;

  void push(const Event& e) {
    if (size_ == capacity_) grow();
    const std::uint32_t slot = free_count_ != 0 ? free_slots()[--free_count_] : slots_used_++;
    slab()[slot] = e;
    const Entry entry{time_key(e.time), e.source, slot};
    if (stale_root_) {
      // The root is a lazily popped key: the new event takes its place.
      stale_root_ = false;
      ++size_;
      replace_root(entry);
    } else {
      sift_up(size_++, entry);
    }
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const Event& top() const { return slab()[keys()[0].slot]; }
  double top_time() const {
    return size_ == 0 ? std::numeric_limits<double>::infinity() : key_time(keys()[0].time);
  }

  Event pop() {
    const std::uint32_t slot = keys()[0].slot;
    remove_root();
    free_slots()[free_count_++] = slot;
    // The next event to pop has usually waited long enough to leave the
    // cache; start loading it while the caller handles this one.
    if (size_ != 0) __builtin_prefetch(&slab()[keys()[0].slot]);
    return slab()[slot];
  }

  // pop() that leaves the popped key at the root (not empty). Only push()
  // may follow, then settle(): the first push puts its key in the root's
  // place with one sift; settle() removes the key if no push did.
  Event pop_lazy() {
    const std::uint32_t slot = keys()[0].slot;
    free_slots()[free_count_++] = slot;  // the next push reuses it (in cache)
    stale_root_ = true;
    --size_;  // the stale root no longer counts; a push grows from here
    return slab()[slot];
  }
  void settle() {
    if (stale_root_) {
      stale_root_ = false;
      const Entry last = keys()[size_];  // the heap's last key (size_ was lowered)
      if (size_ != 0) replace_root(last);
    }
    if (size_ != 0) __builtin_prefetch(&slab()[keys()[0].slot]);
  }

  // Address of the event pop() would return (null when empty), for prefetching.
  const Event* top_address() const { return size_ == 0 ? nullptr : &slab()[keys()[0].slot]; }
  // Address of the first heap key (null when empty), for prefetching.
  const void* front_address() const { return size_ == 0 ? nullptr : keys(); }

  // Drops every event; keeps the buffer.
  void clear() {
    size_ = slots_used_ = free_count_ = 0;
    stale_root_ = false;
  }

  // Visits every pending event, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::uint32_t i = 0; i < size_; ++i) fn(slab()[keys()[i].slot]);
  }

 private:
  struct Entry {
    std::uint64_t time;  // time_key(event.time)
    EntityId source;
    std::uint32_t slot;
  };
  static_assert(sizeof(Entry) == 16 && sizeof(Event) % 8 == 0, "buffer layout");

  // key_less (time, source, seq) on entries.
  bool less(const Entry& a, const Entry& b) const {
    if (a.time != b.time) return a.time < b.time;
    if (a.source != b.source) return a.source < b.source;
    return slab()[a.slot].seq < slab()[b.slot].seq;
  }

  // Puts `e` at hole `i` or above it.
  void sift_up(std::uint32_t i, const Entry& e) {
    Entry* keys = this->keys();
    while (i > 0) {
      const std::uint32_t parent = (i - 1) / 2;
      if (!less(e, keys[parent])) break;
      keys[i] = keys[parent];
      i = parent;
    }
    keys[i] = e;
  }

  // The root's key leaves, `e` enters (size_ unchanged). Floyd's order: walk
  // the hole down to a leaf along the smaller children (one comparison per
  // level), then sift `e` up from there; `e` is usually a late event (the
  // heap's last key, or one just scheduled) and stays near the bottom.
  void replace_root(const Entry& e) {
    Entry* keys = this->keys();
    const std::uint32_t n = size_;
    std::uint32_t i = 0;
    for (std::uint32_t child = 1; child < n; child = 2 * i + 1) {
      if (child + 1 < n && less(keys[child + 1], keys[child])) ++child;
      keys[i] = keys[child];
      i = child;
    }
    sift_up(i, e);
  }

  void remove_root() {
    const Entry last = keys()[--size_];
    if (size_ != 0) replace_root(last);
  }

  // The buffer: capacity_ keys, then capacity_ event slots, then capacity_
  // free-slot indices. Invariant: size_ == slots_used_ - free_count_ (a
  // stale root counts for neither).
  Entry* keys() const { return reinterpret_cast<Entry*>(buf_.get()); }
  Event* slab() const { return reinterpret_cast<Event*>(buf_.get() + sizeof(Entry) * capacity_); }
  std::uint32_t* free_slots() const {
    return reinterpret_cast<std::uint32_t*>(buf_.get() + (sizeof(Entry) + sizeof(Event)) * capacity_);
  }
  static std::size_t bytes(std::uint32_t capacity) {
    return (sizeof(Entry) + sizeof(Event) + sizeof(std::uint32_t)) * std::size_t{capacity};
  }

  void grow() {
    const std::uint32_t capacity = capacity_ == 0 ? 4 : capacity_ * 2;
    if (capacity <= capacity_) throw std::length_error("EventHeap: more than 2^32 events");
    // new[] of unsigned char is aligned for any fundamental type (Event needs 8).
    std::unique_ptr<unsigned char[]> buf(new unsigned char[bytes(capacity)]);
    const auto* old_keys = keys();
    const auto* old_slab = slab();
    const auto* old_free = free_slots();
    unsigned char* p = buf.get();
    if (size_ != 0) std::memcpy(p, old_keys, sizeof(Entry) * size_);
    p += sizeof(Entry) * capacity;
    if (slots_used_ != 0) std::memcpy(p, old_slab, sizeof(Event) * slots_used_);
    p += sizeof(Event) * capacity;
    if (free_count_ != 0) std::memcpy(p, old_free, sizeof(std::uint32_t) * free_count_);
    buf_ = std::move(buf);
    capacity_ = capacity;
  }

  std::unique_ptr<unsigned char[]> buf_;
  std::uint32_t size_ = 0;        // keys in the heap
  std::uint32_t capacity_ = 0;    // keys, slots and free indices the buffer holds
  std::uint32_t slots_used_ = 0;  // slab slots ever handed out (free ones included)
  std::uint32_t free_count_ = 0;  // freed slots waiting for reuse
  bool stale_root_ = false;       // between pop_lazy() and the next push()/settle()
};

}  // namespace seer
