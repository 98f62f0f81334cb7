// The serial executor's pending events: a calendar of time buckets; the
// current bucket is sorted once into a run, with a small 4-ary heap beside it
// for events pushed into the bucket being drained (or before it).
//
// Order: time, then source, then seq (EventAfter), exactly. Events are split
// by bucket, b(t) = floor((t - origin) / width), a function that never
// decreases as t grows, so an event in an earlier bucket has a strictly
// smaller time: only events of one bucket are ever compared.
//   * the run holds the current bucket cur_, sorted (a rank sort without
//     branches for up to 8 keys, std::sort beyond), popped front to back;
//   * the heap holds events pushed at or below cur_ since; pop takes the
//     smaller of the run's head and the heap's top;
//   * the ring holds the next nb_ - 1 buckets, each an unsorted singly
//     linked list through the events' slab slots (a push is three stores);
//   * the far list holds events beyond the ring (and +inf times).
// When run and heap are both empty the next non-empty ring bucket (found in
// a bitmap) becomes the run. So push and pop cost O(1) amortized, instead of
// sifting through a heap of every pending event (PHOLD 1024: ~1k events, PCS
// 64x64: ~65k, deep and out of L1/L2, with a misprediction per level).
//
// The width adapts: every kEpochPops pops the queue measures events popped
// per unit of time and rebuilds the calendar (all events redistributed)
// when the width drifts 3x from kTarget events per bucket or the ring (4x
// the pending count / kTarget buckets) is 4x too small or 8x too large.
// Without a usable width (under 128 events, all at one time, non-finite
// times, or a NaN time pushed) every event goes to the heap, which is a
// complete queue by itself ("heap only"); a heap-only queue tries a calendar
// again once it holds twice as many events (256 at first).
// The same fallback keeps the queue whole when memory runs out: a bucket or
// rebuild that cannot allocate leaves every event in the heap, so pop never
// throws, and push throws std::bad_alloc only before it changed anything.
//
// The keys are (time as an order-preserving integer, source << 32 | seq),
// compared as one 128-bit number. That packing is exact while
// every seq is below 2^32 - 1; a larger seq saturates, and from then on
// comparisons of equal keys read seq from the event itself (`wide_seq_`; the
// run is then sorted with std::sort). The events stay in a slab whose free
// slots are reused. Only the serial executor uses it: the parallel
// executor's per-entity heaps hold a few events each (NodeHeap).
// Not thread-safe.
//
// This file is the calendar (ring, far list, width) and the queue over its
// parts: the keys (serial_queue_key.hpp), the side heap
// (serial_queue_heap.hpp), the sorted run (serial_queue_run.hpp) and their
// aligned buffers (aligned_buffer.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

#include "seer/event.hpp"
#include "aligned_buffer.hpp"
#include "compiler.hpp"
#include "serial_queue_heap.hpp"
#include "serial_queue_key.hpp"
#include "serial_queue_run.hpp"

namespace seer {

class SerialEventQueue {
 public:
  SerialEventQueue() = default;
  SerialEventQueue(const SerialEventQueue&) = delete;
  SerialEventQueue& operator=(const SerialEventQueue&) = delete;

  void push(const Event& e) {
    // The heap can take every event (rebuilds gather all into it), so it
    // grows here, where nothing is half done if that throws.
    if (size_ == capacity_) grow();
    std::uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
      slab_[slot] = e;
    } else {
      slot = static_cast<std::uint32_t>(slab_.size());
      if (next_.size() <= slot) next_.push_back(kNone);
      // pop() returns slots here and must not allocate.
      if (free_slots_.capacity() <= slot) free_slots_.reserve(2 * std::size_t{slot} + 64);
      slab_.push_back(e);
    }
    if (e.seq >= kSeqCap) wide_seq_ = true;
    if (size_++ == 0) restart(e.time);
    const double x = (e.time - origin_) * inv_width_;
    if (x < near_end_) {
      heap_push(slot);
      if (heap_size_ > heap_limit_) rebuild(0.0);
    } else if (x < ring_end_) {
      link_ring(static_cast<std::uint64_t>(static_cast<std::int64_t>(x)), slot);
    } else {
      push_far(slot, x);
    }
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const Event& top() const { return slab_[top_key().slot]; }
  double top_time() const {
    return size_ == 0 ? std::numeric_limits<double>::infinity() : key_time(top_key().time);
  }

  Event pop() {
    std::uint32_t slot;
    if (run_taken(run_head_ != run_end_)) {
      slot = run_[run_head_++].slot;
    } else {
      slot = keys_[0].slot;
      if (--heap_size_ != 0) {
        if (wide_seq_) {
          sift_down_last<true, false>();
        } else if (heap_size_ > kBranchlessMax) {
          sift_down_last<false, true>();
        } else {
          sift_down_last<false, false>();
        }
      }
    }
    --size_;
    free_slots_.push_back(slot);
    ++pops_;
    // (No prefetch of the next event, as the one-heap queue did: sorting the
    // bucket just read the events of the run.)
    if (run_head_ == run_end_ && heap_size_ == 0 && size_ != 0) refill(slab_[slot].time);
    return slab_[slot];
  }

  // Drops every event; keeps the buffers and the width.
  void clear() {
    forget_placements();
    size_ = 0;
    slab_.clear();
    free_slots_.clear();
    wide_seq_ = false;
    heap_only(kHeapOnlyLimit);
  }

  // Room for `n` more events without growing the slab or its per-slot
  // lists (a bulk insert: growing them by doubling held the old and the new
  // slab at once); address space only, until events are written. Throws
  // std::bad_alloc with no event changed.
  void reserve(std::size_t n) {
    const std::size_t slots = slab_.size() + n;
    slab_.reserve(slots);
    next_.reserve(slots);
    free_slots_.reserve(slots);
  }

  // Removes every pending event, each after fn(event) returned, in slot
  // order from the last slot down (not key order), and offers the slab's
  // emptied end to release(begin, bytes) every kReleaseBytes: a caller that
  // moves the events elsewhere gives those pages back as it goes, so the
  // events' new home fills as this one empties (the parallel executor's
  // hand-over to its per-entity queues). Then the queue is empty, its
  // buffers kept. If fn throws, the events it did not take stay pending,
  // all in the heap (a complete queue; no allocation), and the exception
  // propagates. Throws std::bad_alloc before taking any event.
  template <class Fn, class Release>
  void take_all(Fn&& fn, Release&& release) {
    std::vector<bool> is_free(slab_.size(), false);
    for (const std::uint32_t s : free_slots_) is_free[s] = true;
    const std::size_t end = slab_.size();
    std::size_t offered = end;  // slab_[offered, end) was offered to release
    std::size_t s = end;        // slab_[s, end) is taken
    try {
      for (; s != 0; --s) {
        if (!is_free[s - 1]) fn(static_cast<const Event&>(slab_[s - 1]));
        if ((offered - (s - 1)) * sizeof(Event) >= kReleaseBytes) {
          offered = s - 1;
          release(static_cast<void*>(slab_.data() + offered), (end - offered) * sizeof(Event));
        }
      }
    } catch (...) {
      keep_in_heap(s, is_free);
      throw;
    }
    clear();
  }

  // For tests and profiling: whether buckets are in use (else the heap holds
  // every event) and how often the calendar was rebuilt.
  struct CalendarStats {
    bool in_use;
    std::uint64_t rebuilds;
  };
  CalendarStats calendar_stats() const { return {!heap_only_, rebuilds_}; }

  // Visits every pending event, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::uint32_t i = 0; i < heap_size_; ++i) fn(slab_[keys_[i].slot]);
    for (std::uint32_t i = run_head_; i < run_end_; ++i) fn(slab_[run_[i].slot]);
    auto visit = [&](std::uint32_t s) { fn(slab_[s]); };
    for_each_full_bucket([&](std::size_t b) { for_each_in_list(head_[b], visit); });
    for_each_in_list(far_head_, visit);
  }

 private:
  using Key = QueueKey;
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;        // end of a list
  // Above this many keys (384 KiB) the pop branches on its comparisons: each
  // level's loads then wait on the previous level's comparison, and without
  // branch speculation running ahead a heap in L3 paid the full latency at
  // every level. Only a heap-only queue gets that large.
  static constexpr std::uint32_t kBranchlessMax = 16384;
  // take_all offers the slab's emptied end every this many bytes.
  static constexpr std::size_t kReleaseBytes = std::size_t{1} << 20;
  // Calendar tuning: events per bucket aimed at, pops between width checks,
  // heap-only size that triggers the first calendar, ring size bounds.
  // 4 per bucket measured best of 2-8 (PHOLD 1024, PCS 64x64: callgrind
  // instructions and simulated mispredictions): fewer buckets to visit
  // against more keys to sort and fewer that fit the branch-free sort.
  static constexpr double kTarget = 4.0;
  static constexpr std::uint32_t kSmallRun = queue_run::kSmallRun;
  static constexpr std::uint64_t kEpochPops = 4096;
  static constexpr std::uint32_t kHeapOnlyLimit = 256;
  static constexpr std::uint64_t kMinBuckets = 64;
  static constexpr std::uint64_t kMaxBuckets = std::uint64_t{1} << 20;

  Key key_of(std::uint32_t slot) const {
    const Event& e = slab_[slot];
    return Key{time_key(e.time), tie_key(e.source, e.seq), slot, 0};
  }
  // Whether the next event comes from the run (given one is left) rather
  // than the heap.
  bool run_taken(bool run_left) const {
    if (!run_left) return false;
    if (heap_size_ == 0) return true;
    return wide_seq_ ? before<true>(run_[run_head_], keys_[0])
                     : before<false>(run_[run_head_], keys_[0]);
  }
  const Key& top_key() const {
    return run_taken(run_head_ != run_end_) ? run_[run_head_] : keys_[0];
  }
  double bucket_x(std::uint32_t slot) const { return (slab_[slot].time - origin_) * inv_width_; }

  // ---- calendar ----

  // Calls fn(b) for each non-empty ring bucket b.
  template <class Fn>
  void for_each_full_bucket(Fn&& fn) const {
    for (std::size_t w = 0; w < bits_.size(); ++w) {
      for (std::uint64_t word = bits_[w]; word != 0; word &= word - 1) {
        fn(w * 64 + static_cast<std::size_t>(lowest_set_bit(word)));
      }
    }
  }

  // Calls fn(s) for each slot of the list starting at `head`; fn may link s
  // into another list (its successor is read first).
  template <class Fn>
  void for_each_in_list(std::uint32_t head, Fn&& fn) const {
    for (std::uint32_t s = head; s != kNone;) {
      const std::uint32_t n = next_[s];
      fn(s);
      s = n;
    }
  }

  // Ring buckets are placed from x in [cur_ + 1, cur_ + nb_), below 2^53:
  // the conversion goes through int64 (one instruction; uint64 takes a test).
  void link_ring(std::uint64_t b, std::uint32_t slot) {
    const std::uint64_t i = b & mask_;
    next_[slot] = head_[i];
    head_[i] = slot;
    bits_[i >> 6] |= std::uint64_t{1} << (i & 63);
  }

  void link_far(std::uint32_t slot, double x) {
    next_[slot] = far_head_;
    far_head_ = slot;
    if (x < far_min_x_) far_min_x_ = x;
  }

  // Beyond the ring, or a time the calendar cannot place.
  void push_far(std::uint32_t slot, double x) {
    if (heap_only_) {
      heap_push(slot);
      if (heap_size_ > heap_limit_) rebuild(0.0);
    } else if (std::isnan(x)) {
      // A NaN time (never from Context, which checks times): the heap
      // orders it by its bits as the one-heap queue did.
      gather_into_heap();
      heap_push(slot);
      heap_only(2 * size_);
    } else {
      link_far(slot, x);
    }
  }

  // The first event after the queue was empty: buckets restart at its time.
  void restart(double t) {
    if (heap_only_ || !std::isfinite(t)) return heap_only(std::max(heap_limit_, kHeapOnlyLimit));
    origin_ = t;
    set_cur(0);
  }

  void set_cur(std::uint64_t cur) {
    cur_ = cur;
    near_end_ = static_cast<double>(cur + 1);
    ring_end_ = static_cast<double>(cur + nb_);
  }

  void heap_only(std::uint32_t limit) {
    heap_only_ = true;
    heap_limit_ = limit;
    near_end_ = std::numeric_limits<double>::infinity();
    ring_end_ = std::numeric_limits<double>::infinity();
  }

  // Run and heap ran empty with events left: the next ring bucket becomes
  // current, after far events now within the ring's reach joined it.
  void refill(double now) {
    if (pops_ - epoch_pops_ >= kEpochPops && check_width(now)) return;
    for (;;) {
      const std::uint64_t b = next_bucket();
      if (b == kNoBucket) return rebuild(0.0);  // a gap: restart at the far events
      // far_min_x_ is +inf while the far list is empty: one rarely true test
      // (testing for a non-empty list would flip often, mispredicted).
      if (far_min_x_ < static_cast<double>(b + 1)) {
        // Every bucket before min(b, far's first) is empty: move there first,
        // so the ring reaches as far as it can.
        const double far_first = std::floor(far_min_x_);
        if (far_first > static_cast<double>(cur_ + 1)) {
          set_cur(static_cast<std::uint64_t>(far_first) - 1);
        }
        migrate_far();
        continue;
      }
      if (!load_bucket(b)) {
        // No memory for the run: the heap alone serves (a complete queue),
        // so that pop neither throws nor loses the event it took.
        gather_into_heap();
        heap_only(std::max<std::uint32_t>(kHeapOnlyLimit, 2 * size_));
      }
      return;
    }
  }

  static constexpr std::uint64_t kNoBucket = ~std::uint64_t{0};

  // The first non-empty bucket after cur_, or kNoBucket.
  std::uint64_t next_bucket() const {
    const std::uint64_t start = (cur_ + 1) & mask_;
    std::uint64_t w = start >> 6;
    std::uint64_t word = bits_[w] & (~std::uint64_t{0} << (start & 63));
    const std::uint64_t words = bits_.size();
    for (std::uint64_t n = 0; n <= words; ++n) {
      if (word != 0) {
        const std::uint64_t i = w * 64 + static_cast<std::uint64_t>(lowest_set_bit(word));
        return cur_ + 1 + ((i - start) & mask_);
      }
      w = w + 1 == words ? 0 : w + 1;
      word = bits_[w];
    }
    return kNoBucket;
  }

  // The bucket becomes the run: its keys, sorted once. False, with the
  // queue unchanged, when the buffers could not grow (the bucket leaves the
  // ring only after they did).
  bool load_bucket(std::uint64_t b) {
    const std::uint64_t i = b & mask_;
    std::uint32_t n = 0;
    for (std::uint32_t s = head_[i]; s != kNone; s = next_[s]) {
      if (n == gather_.size() && !grow_gather()) return false;
      gather_[n++] = key_of(s);
    }
    if (std::max(n, kSmallRun) > run_capacity_ && !grow_run(std::max(n, kSmallRun))) return false;
    set_cur(b);
    head_[i] = kNone;
    bits_[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
    run_head_ = 0;
    run_end_ = n;
    if (wide_seq_) {
      sort_run<true>(n);
    } else {
      sort_run<false>(n);
    }
    return true;
  }

  // Rare (a bucket larger than any before), out of the loop that gathers.
  bool grow_gather() noexcept {
    try {
      gather_.resize(2 * gather_.size());
      return true;
    } catch (const std::bad_alloc&) {
      return false;
    }
  }

  // The bucket's keys (gather_) into the run, sorted (serial_queue_run.hpp).
  template <bool kWide>
  void sort_run(std::uint32_t n) {
    queue_run::sort_run<kWide>(gather_.data(), n, run_, slab_.data());
  }

  // False, with the old (empty) run kept, if the allocation fails.
  bool grow_run(std::uint32_t need) noexcept {
    std::uint32_t capacity = run_capacity_;
    while (capacity < need) capacity = capacity == 0 ? 64 : 2 * capacity;
    unsigned char* raw = allocate_aligned(sizeof(Key) * std::size_t{capacity}, std::nothrow);
    if (raw == nullptr) return false;
    run_buf_.reset(raw);
    run_ = reinterpret_cast<Key*>(raw);
    run_capacity_ = capacity;
    return true;
  }

  // Puts the event in slot `s` where its bucket says: the side heap (the
  // current bucket or before), the ring, or the far list.
  void place(std::uint32_t s) {
    const double x = bucket_x(s);
    if (x < near_end_) {
      heap_push(s);
    } else if (x < ring_end_) {
      link_ring(static_cast<std::uint64_t>(static_cast<std::int64_t>(x)), s);
    } else {
      link_far(s, x);
    }
  }

  // Far events that the ring now reaches move into it.
  void migrate_far() {
    const std::uint32_t far = far_head_;
    far_head_ = kNone;
    far_min_x_ = std::numeric_limits<double>::infinity();
    for_each_in_list(far, [&](std::uint32_t s) { place(s); });
  }

  // Every kEpochPops pops: rebuilds when the measured density asks for a
  // width 3x off, or the pending count for a ring 4x off. True if rebuilt.
  bool check_width(double now) {
    const double span = now - epoch_time_;
    const double popped = static_cast<double>(pops_ - epoch_pops_);
    epoch_pops_ = pops_;
    epoch_time_ = now;
    if (!(span > 0.0) || !std::isfinite(span)) return false;
    const double width = kTarget * span / popped;
    const std::uint64_t nb = ring_size_for(size_);
    if (width > 3.0 * width_ || 3.0 * width < width_ || nb >= 4 * nb_ || 8 * nb <= nb_) {
      rebuild(width);
      return true;
    }
    return false;
  }

  static std::uint64_t ring_size_for(std::size_t n) {
    const double want = 4.0 * static_cast<double>(n) / kTarget;
    std::uint64_t nb = kMinBuckets;
    while (nb < kMaxBuckets && static_cast<double>(nb) < want) nb *= 2;
    return nb;
  }

  // Moves every pending event into the heap (a complete queue by itself).
  void gather_into_heap() {
    for (std::uint32_t i = run_head_; i < run_end_; ++i) heap_push(run_[i].slot);
    run_head_ = run_end_ = 0;
    auto to_heap = [&](std::uint32_t s) { heap_push(s); };
    for_each_full_bucket([&](std::size_t b) {
      for_each_in_list(head_[b], to_heap);
      head_[b] = kNone;
    });
    std::fill(bits_.begin(), bits_.end(), 0);
    for_each_in_list(far_head_, to_heap);
    far_head_ = kNone;
    far_min_x_ = std::numeric_limits<double>::infinity();
  }

  // Empties the heap, the run, the ring and the far list (the events stay
  // in the slab, placed nowhere).
  void forget_placements() {
    for_each_full_bucket([&](std::size_t b) { head_[b] = kNone; });
    std::fill(bits_.begin(), bits_.end(), 0);
    heap_size_ = 0;
    run_head_ = run_end_ = 0;
    far_head_ = kNone;
    far_min_x_ = std::numeric_limits<double>::infinity();
  }

  // After take_all's fn threw: the events of slots [0, n) not marked free
  // are what is left; each goes into the heap, which holds as many keys as
  // the queue held events (push grew it), so nothing allocates.
  void keep_in_heap(std::size_t n, const std::vector<bool>& is_free) {
    forget_placements();
    slab_.erase(slab_.begin() + static_cast<std::ptrdiff_t>(n), slab_.end());
    free_slots_.erase(std::remove_if(free_slots_.begin(), free_slots_.end(),
                                     [n](std::uint32_t s) { return s >= n; }),
                      free_slots_.end());
    for (std::uint32_t s = 0; s < n; ++s) {
      if (!is_free[s]) heap_push(s);
    }
    size_ = heap_size_;
    heap_only(std::max<std::uint32_t>(kHeapOnlyLimit, 2 * size_));
  }

  // Redistributes every pending event over a new calendar that starts at the
  // earliest time. width > 0: that width; else one estimated from the
  // pending times (kTarget events per bucket over the earlier half).
  void rebuild(double width) {
    ++rebuilds_;
    gather_into_heap();
    const std::size_t n = heap_size_;
    const double t0 = key_time(keys_[0].time);  // the earliest: the heap's top
    if (!(width > 0.0)) {
      // The median of a sample of the pending times.
      double sample[64];
      const std::uint32_t m = std::min<std::uint32_t>(heap_size_, 64);
      for (std::uint32_t k = 0; k < m; ++k) {
        sample[k] = slab_[keys_[std::size_t{k} * heap_size_ / m].slot].time;
      }
      std::nth_element(sample, sample + m / 2, sample + m);
      width = kTarget * (sample[m / 2] - t0) / (0.5 * static_cast<double>(n));
    }
    const double inv = 1.0 / width;
    // Heap-only until the calendar is set up: every event is in the heap,
    // which is where they stay if an allocation below fails (rebuild never
    // throws: push and pop call it after they changed the queue).
    heap_only(std::max<std::uint32_t>(kHeapOnlyLimit, 2 * heap_size_));
    if (n < kHeapOnlyLimit / 2 || !std::isfinite(t0) || !(width > 0.0) || !std::isfinite(width) ||
        !(inv > 0.0) || !std::isfinite(inv)) {
      return;  // no usable width: the heap alone, until it grows twice as large
    }
    const std::uint64_t nb = ring_size_for(n);
    try {
      if (nb != nb_) {
        nb_ = 0;  // until head_ and bits_ both have the new size
        head_.assign(nb, kNone);
        bits_.assign(nb / 64, 0);
        nb_ = nb;
        mask_ = nb - 1;
      }
      scratch_.reserve(n);
    } catch (const std::bad_alloc&) {
      return;
    }
    // Take the heap's keys out and place them again.
    std::vector<std::uint32_t>& slots = scratch_;
    slots.clear();
    for (std::uint32_t k = 0; k < heap_size_; ++k) slots.push_back(keys_[k].slot);
    heap_only_ = false;
    heap_limit_ = kNone;
    width_ = width;
    inv_width_ = inv;
    origin_ = t0;
    set_cur(0);
    epoch_pops_ = pops_;
    epoch_time_ = t0;
    heap_size_ = 0;
    for (const std::uint32_t s : slots) place(s);
  }

  // ---- heap ----

  // capacity_ >= size_ >= heap_size_ + 1 here (push grew the buffer).
  void heap_push(std::uint32_t slot) {
    if (wide_seq_) {
      queue_heap::sift_up<true>(keys_, heap_size_++, key_of(slot), slab_.data());
    } else {
      queue_heap::sift_up<false>(keys_, heap_size_++, key_of(slot), slab_.data());
    }
  }

  // Removes keys_[0]; keys_[heap_size_] is the last key, to re-place
  // (serial_queue_heap.hpp).
  template <bool kWide, bool kBranchy>
  void sift_down_last() {
    queue_heap::sift_down_last<kWide, kBranchy>(keys_, heap_size_, slab_.data());
  }

  // a before b in (time, source, seq) (key_before: the events' seqs decide
  // only between equal keys with wide seqs).
  template <bool kWide>
  bool before(const Key& a, const Key& b) const {
    return key_before<kWide>(a, b, slab_.data());
  }

  // Doubles the heap's buffer (its keys kept); throws before changing anything.
  void grow() {
    const std::uint32_t capacity = capacity_ == 0 ? 64 : capacity_ * 2;
    if (capacity <= capacity_) throw std::length_error("SerialEventQueue: more than 2^32 events");
    unsigned char* raw = allocate_aligned(sizeof(Key) * std::size_t{capacity});
    AlignedBuffer buf(raw);
    Key* keys = reinterpret_cast<Key*>(raw);
    if (heap_size_ != 0) std::memcpy(keys, keys_, sizeof(Key) * heap_size_);
    buf_ = std::move(buf);
    keys_ = keys;
    capacity_ = capacity;
  }

  // Heap.
  AlignedBuffer buf_;
  Key* keys_ = nullptr;         // the heap, inside buf_
  std::uint32_t heap_size_ = 0;  // keys in the heap
  std::uint32_t capacity_ = 0;  // keys buf_ holds
  std::uint32_t heap_limit_ = kHeapOnlyLimit;  // heap-only: above this, try a calendar
  bool heap_only_ = true;       // no calendar: every event goes to the heap
  bool wide_seq_ = false;       // some pending or past event had seq >= kSeqCap
  std::uint32_t size_ = 0;      // events in the queue (heap, ring, far list)
  // Calendar: bucket of time t is floor(x), x = (t - origin_) * inv_width_.
  double origin_ = 0.0;
  double width_ = 1.0;
  double inv_width_ = 1.0;
  double near_end_ = std::numeric_limits<double>::infinity();  // x below: heap (cur_ + 1)
  double ring_end_ = std::numeric_limits<double>::infinity();  // x below: ring (cur_ + nb_)
  std::uint64_t cur_ = 0;       // the bucket the heap drains
  std::uint64_t nb_ = 0;        // ring buckets (a power of two), mask_ = nb_ - 1
  std::uint64_t mask_ = 0;
  std::vector<std::uint32_t> head_;   // ring bucket -> first slot of its list
  std::vector<std::uint64_t> bits_;   // ring bucket -> non-empty
  std::uint32_t far_head_ = kNone;    // events beyond the ring
  double far_min_x_ = std::numeric_limits<double>::infinity();  // +inf when empty
  // Width checks.
  std::uint64_t pops_ = 0;
  std::uint64_t rebuilds_ = 0;
  std::uint64_t epoch_pops_ = 0;
  double epoch_time_ = 0.0;
  // The current bucket's events, sorted: run_[run_head_, run_end_).
  AlignedBuffer run_buf_;
  Key* run_ = nullptr;
  std::uint32_t run_head_ = 0;
  std::uint32_t run_end_ = 0;
  std::uint32_t run_capacity_ = 0;
  std::vector<Key> gather_ = std::vector<Key>(kSmallRun);  // a bucket's keys, unsorted
  // Events.
  std::vector<Event> slab_;           // events by slot (free ones included)
  std::vector<std::uint32_t> next_;   // slot -> next slot in its bucket or far list
  std::vector<std::uint32_t> free_slots_;  // freed slots waiting for reuse
  std::vector<std::uint32_t> scratch_;     // rebuild's list of slots
};

}  // namespace seer
