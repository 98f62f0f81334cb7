// The serial executor's pending events: a 4-ary min-heap of compact keys.
//
// Same order as EventHeap (time, then source, then seq), but:
//   * the key is two integers, (time as an order-preserving integer,
//     source << 32 | seq), compared as one 128-bit number: no branch on
//     floating point, and the compiler selects children with conditional
//     moves instead of unpredictable branches. That packing is exact while
//     every seq is below 2^32 - 1; a larger seq (4 billion events scheduled
//     by one entity in one episode) saturates, and from then on the queue
//     compares seq from the event itself on equal keys (`wide_seq_`);
//   * 4 children per node: half the levels of a binary heap, so half the
//     dependent loads on the way down.
// The events stay in a slab whose free slots are reused, as in EventHeap.
// Only the serial executor uses it: the parallel executor's per-entity heaps
// hold a few events each and keep EventHeap's single buffer.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <vector>

#include "seer/event.hpp"

namespace seer {

class SerialEventQueue {
 public:
  SerialEventQueue() = default;
  SerialEventQueue(const SerialEventQueue&) = delete;
  SerialEventQueue& operator=(const SerialEventQueue&) = delete;

  void push(const Event& e) {
    if (size_ == capacity_) grow();
    std::uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
      slab_[slot] = e;
    } else {
      slot = static_cast<std::uint32_t>(slab_.size());
      slab_.push_back(e);
    }
    if (e.seq >= kSeqCap) wide_seq_ = true;
    const Key key{time_key(e.time), tie_key(e.source, e.seq), slot, 0};
    if (wide_seq_) {
      sift_up<true>(size_++, key);
    } else {
      sift_up<false>(size_++, key);
    }
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const Event& top() const { return slab_[keys_[0].slot]; }
  double top_time() const {
    return size_ == 0 ? std::numeric_limits<double>::infinity() : key_time(keys_[0].time);
  }

  Event pop() {
    const std::uint32_t slot = keys_[0].slot;
    --size_;
    if (size_ != 0) {
      if (wide_seq_) {
        sift_down_last<true, false>();
      } else if (size_ > kBranchlessMax) {
        sift_down_last<false, true>();
      } else {
        sift_down_last<false, false>();
      }
    }
    free_slots_.push_back(slot);
    // The next event to pop has usually waited long enough to leave the
    // cache; start loading it while the caller handles this one.
    if (size_ != 0) __builtin_prefetch(&slab_[keys_[0].slot]);
    return slab_[slot];
  }

  // Drops every event; keeps the buffers.
  void clear() {
    size_ = 0;
    slab_.clear();
    free_slots_.clear();
    wide_seq_ = false;
  }

  // Visits every pending event, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::uint32_t i = 0; i < size_; ++i) fn(slab_[keys_[i].slot]);
  }

 private:
  struct Key {
    std::uint64_t time;  // time_key(event.time)
    std::uint64_t tie;   // tie_key(event.source, event.seq)
    std::uint32_t slot;  // the event in slab_
    std::uint32_t unused;
  };
  static_assert(sizeof(Key) == 24, "key layout");
  static constexpr std::uint64_t kSeqCap = 0xFFFFFFFFull;  // seqs from here on saturate
  // Above this many keys (384 KiB: beyond what stays in a core's L2 next to
  // the events) the pop branches on its comparisons instead: each level's
  // loads then wait on the previous level's comparison, and without branch
  // speculation running ahead, a heap in L3 (PCS 64x64: 65k events) paid the
  // full latency at every level (serial PCS 64x64 ~15% slower per event).
  static constexpr std::uint32_t kBranchlessMax = 16384;
  static constexpr std::size_t kLine = 64;

  // Doubles map to unsigned integers in the same order (negatives flipped,
  // the sign bit set on the rest); -0.0 first becomes +0.0, since the two
  // compare equal as times. Event times are finite (Context checks).
  static std::uint64_t time_key(double t) {
    t += 0.0;  // -0.0 + 0.0 == +0.0 under round-to-nearest
    std::uint64_t bits;
    std::memcpy(&bits, &t, sizeof bits);
    return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
  }
  static double key_time(std::uint64_t key) {
    const std::uint64_t bits = (key >> 63) != 0 ? key & ~(std::uint64_t{1} << 63) : ~key;
    double t;
    std::memcpy(&t, &bits, sizeof t);
    return t;
  }
  static std::uint64_t tie_key(EntityId source, std::uint64_t seq) {
    return std::uint64_t{source} << 32 | (seq < kSeqCap ? seq : kSeqCap);
  }

  // a before b in (time, source, seq). Without wide seqs the two words
  // decide (keys are unique); with them, equal words mean two saturated
  // seqs of one source at one time, and the events' seqs decide.
  template <bool kWide>
  bool before(const Key& a, const Key& b) const {
    const unsigned __int128 x = static_cast<unsigned __int128>(a.time) << 64 | a.tie;
    const unsigned __int128 y = static_cast<unsigned __int128>(b.time) << 64 | b.tie;
    if (kWide && x == y) return slab_[a.slot].seq < slab_[b.slot].seq;
    return x < y;
  }

  template <bool kWide>
  void sift_up(std::uint32_t i, const Key key) {
    Key* keys = keys_;
    while (i != 0) {
      const std::uint32_t parent = (i - 1) / 4;
      if (!before<kWide>(key, keys[parent])) break;
      keys[i] = keys[parent];
      i = parent;
    }
    keys[i] = key;
  }

  // Removes keys_[0]: the hole walks down along the smallest children to a
  // leaf (no comparison with the moved key on the way: it usually belongs
  // near the bottom), then the last key fills it and rises as needed.
  template <bool kWide, bool kBranchy>
  void sift_down_last() {
    Key* keys = keys_;
    const std::uint32_t n = size_;  // keys_[n] is the last key, to re-place
    std::uint32_t hole = 0;
    for (;;) {
      const std::uint32_t first = 4 * hole + 1;
      if (first + 3 < n) {
        std::uint32_t m;
        if constexpr (kBranchy) {
          m = first;
          for (std::uint32_t c = first + 1; c <= first + 3; ++c) {
            if (before<kWide>(keys[c], keys[m])) {
              m = c;
              asm volatile("");  // keeps a branch: no conditional move here
            }
          }
        } else {
          const std::uint32_t a = before<kWide>(keys[first + 1], keys[first]) ? first + 1 : first;
          const std::uint32_t b =
              before<kWide>(keys[first + 3], keys[first + 2]) ? first + 3 : first + 2;
          m = before<kWide>(keys[b], keys[a]) ? b : a;
        }
        keys[hole] = keys[m];
        hole = m;
        continue;
      }
      if (first < n) {  // a last, partial group of children
        std::uint32_t m = first;
        for (std::uint32_t c = first + 1; c < n; ++c) {
          if (before<kWide>(keys[c], keys[m])) m = c;
        }
        keys[hole] = keys[m];
        hole = m;
      }
      break;
    }
    sift_up<kWide>(hole, keys[n]);
  }

  void grow() {
    const std::uint32_t capacity = capacity_ == 0 ? 64 : capacity_ * 2;
    if (capacity <= capacity_) throw std::length_error("SerialEventQueue: more than 2^32 events");
    auto* raw = static_cast<unsigned char*>(
        ::operator new(sizeof(Key) * std::size_t{capacity}, std::align_val_t{kLine}));
    Buffer buf(raw);
    Key* keys = reinterpret_cast<Key*>(raw);
    if (size_ != 0) std::memcpy(keys, keys_, sizeof(Key) * size_);
    buf_ = std::move(buf);
    keys_ = keys;
    capacity_ = capacity;
  }

  struct FreeAligned {
    void operator()(unsigned char* p) const { ::operator delete(p, std::align_val_t{kLine}); }
  };
  using Buffer = std::unique_ptr<unsigned char, FreeAligned>;

  Buffer buf_;
  Key* keys_ = nullptr;         // the heap, inside buf_
  std::uint32_t size_ = 0;      // keys in the heap
  std::uint32_t capacity_ = 0;  // keys buf_ holds
  bool wide_seq_ = false;       // some pending or past event had seq >= kSeqCap
  std::vector<Event> slab_;     // events by slot (free ones included)
  std::vector<std::uint32_t> free_slots_;  // freed slots waiting for reuse
};

}  // namespace seer
