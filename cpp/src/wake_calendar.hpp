// Which entities of a worker's slice have an event due, and when: the
// parallel executor finds a round's ready entities here instead of reading
// every entity's queue.
//
// An entry (time, entity) says "entity has a pending event at `time`". The
// engine keeps every pending event of the slice covered by an entry at or
// before its time (docs/runtime.md, "Ready work without a scan"): the entity's
// heap top after each drain or local push, and the time of each remote send
// that lowered the entity's inbox bound (LocalQueue::push_remote). A round
// takes the entries before its horizon; an entity can have several (it is
// pushed onto the executive list once).
//
// Entries sit in time buckets as wide as the lookahead, a ring of kBuckets
// buckets from the current one; later ones wait in a heap (`far_`) and join
// the ring when it reaches them. A round's horizon is LB + lookahead, so
// its ready entries are in at most two buckets, and a bucket that holds
// entries at and after the horizon is walked once more next round: each
// entry is looked at at most twice, plus a bitmap search per round.
// Owner-private: not thread-safe, no atomics (notices from other workers come
// through the engine's per-round outboxes). add() may allocate.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "seer/event.hpp"

namespace seer {

class WakeCalendar {
 public:
  static constexpr std::uint64_t kBuckets = 256;  // a power of two

  // Empties the calendar; buckets `width` wide (the lookahead; any positive
  // width is correct), the ring starting at `now`'s bucket.
  void reset(double width, double now) {
    inv_width_ = width > 0.0 && width < std::numeric_limits<double>::infinity() ? 1.0 / width : 1.0;
    for (Bucket& b : ring_) {
      b.entries.clear();
      b.min = kNever;
    }
    bits_.fill(0);
    far_.clear();
    ring_count_ = 0;
    cur_ = bucket(now);
  }

  // Entity `e` has a pending event at `time` (finite). Allocates when a
  // bucket or the far heap grows.
  void add(double time, EntityId e) {
    const std::uint64_t b = std::max(bucket(time), cur_);
    if (b - cur_ >= kBuckets) {
      far_.push_back({time, e});
      std::push_heap(far_.begin(), far_.end(), Later{});
      return;
    }
    put(b, {time, e});
  }

  // Removes every entry before `horizon` and appends its entity, plus
  // `base`, to `out` (an entity may appear more than once). Adds the entries
  // looked at to `checks`. May allocate (out, ring buckets).
  void take(double horizon, std::uint64_t base, std::vector<EntityId>& out,
            std::uint64_t& checks) {
    for (;;) {
      if (ring_count_ == 0) {
        if (far_.empty() || !(far_.front().time < horizon)) return;
        cur_ = bucket(far_.front().time);  // an empty ring starts anywhere
        migrate();
        continue;
      }
      const std::uint64_t b = next_bucket();
      if (b != cur_) {
        cur_ = b;
        migrate();
      }
      Bucket& bucket = ring_[b & kMask];
      // Buckets are in time order, so once one starts at or after the
      // horizon, every later entry does too.
      if (!(bucket.min < horizon)) return;
      std::size_t keep = 0;
      double min = kNever;
      for (const Entry& x : bucket.entries) {
        if (x.time < horizon) {
          out.push_back(static_cast<EntityId>(base + x.entity));
        } else {
          bucket.entries[keep++] = x;
          min = std::min(min, x.time);
        }
      }
      checks += bucket.entries.size();
      ring_count_ -= bucket.entries.size() - keep;
      bucket.entries.resize(keep);
      bucket.min = min;
      if (keep != 0) return;  // the rest of this bucket and all later ones are >= horizon
      bits_[(b & kMask) / 64] &= ~(std::uint64_t{1} << (b % 64));
      cur_ = b + 1;
      migrate();
    }
  }

  // The earliest entry's time (+inf when empty). Does not allocate.
  double earliest() const {
    if (ring_count_ != 0) return ring_[next_bucket() & kMask].min;
    return far_.empty() ? kNever : far_.front().time;
  }
  std::size_t size() const { return ring_count_ + far_.size(); }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  static constexpr std::uint64_t kMask = kBuckets - 1;
  struct Entry {
    double time;
    EntityId entity;
  };
  struct Bucket {
    std::vector<Entry> entries;
    double min = kNever;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const { return a.time > b.time; }
  };

  // floor(time / width), non-decreasing in time; huge for times past 2^62
  // widths (they stay in the far heap until the ring gets there).
  std::uint64_t bucket(double time) const {
    const double q = time * inv_width_;
    return q < 4.6e18 ? static_cast<std::uint64_t>(q) : std::uint64_t{1} << 62;
  }
  void put(std::uint64_t b, const Entry& x) {
    Bucket& bucket = ring_[b & kMask];
    bucket.entries.push_back(x);
    bucket.min = std::min(bucket.min, x.time);
    bits_[(b & kMask) / 64] |= std::uint64_t{1} << (b % 64);
    ++ring_count_;
  }
  // The far heap's entries that the ring now covers join it (the ring holds
  // buckets [cur_, cur_ + kBuckets); the far heap only later ones).
  void migrate() {
    while (!far_.empty() && bucket(far_.front().time) - cur_ < kBuckets) {
      std::pop_heap(far_.begin(), far_.end(), Later{});
      const Entry x = far_.back();
      far_.pop_back();
      put(std::max(bucket(x.time), cur_), x);
    }
  }
  // The first non-empty bucket at or after cur_ (the ring must hold an entry).
  std::uint64_t next_bucket() const {
    const std::uint64_t start = cur_ & kMask;
    constexpr std::uint64_t kWords = kBuckets / 64;
    for (std::uint64_t k = 0; k <= kWords; ++k) {
      const std::uint64_t word = (start / 64 + k) % kWords;
      std::uint64_t bits = bits_[word];
      if (k == 0) bits &= ~std::uint64_t{0} << (start % 64);  // slots before start: wrapped
      if (bits == 0) continue;
      const std::uint64_t slot = word * 64 + static_cast<std::uint64_t>(__builtin_ctzll(bits));
      return cur_ + ((slot - start) & kMask);
    }
    return cur_;  // unreachable while ring_count_ != 0
  }

  double inv_width_ = 1.0;
  std::uint64_t cur_ = 0;  // the ring's first bucket; no entry is in an earlier one
  std::array<Bucket, kBuckets> ring_;
  std::array<std::uint64_t, kBuckets / 64> bits_{};  // non-empty ring slots
  std::vector<Entry> far_;  // min-heap by time: buckets at or after cur_ + kBuckets
  std::size_t ring_count_ = 0;
};

}  // namespace seer
