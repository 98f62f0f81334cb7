// The parallel executor's wake calendar: which entities of one worker's slice
// of one instance hold an event, and from when, bucketed by time.
//
// It replaces a per-round scan of every entity's queue line: an entity gets
// an entry when something may have become pending for it (the step's begin
// read, the time its drain left at its heap top, a notice from whoever sent
// it an event), and a round lists just the entities whose entry is below the
// horizon. So a round costs what its ready entities and events cost, plus a
// constant per bucket it passes.
//
// Entries are (time, entity); an entity may have several, which the caller
// merges. Buckets cover [t_begin, t_end) in equal widths of about the
// lookahead (at most kMaxBuckets): each round's horizon is at least one
// lookahead past the last, so an entry is looked at in at most two rounds.
// Times at or after t_end are dropped (the next step's begin read finds
// them). Bucket of a time: floor((t - t_begin) / width), monotone in t, so
// every entry of bucket k is below every entry of bucket k + 1.
//
// Owned and used by one worker thread; not thread-safe. Allocates only when
// a bucket grows past what earlier steps needed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "seer/event.hpp"

namespace seer {

class WakeCalendar {
 public:
  static constexpr std::size_t kMaxBuckets = 1024;

  // Empties the calendar for a step over [t_begin, t_end) with `lookahead`.
  void start(double t_begin, double t_end, double lookahead) {
    const double span = t_end - t_begin;
    std::size_t n = 1;
    if (span > 0 && lookahead > 0 && std::isfinite(span)) {
      n = static_cast<std::size_t>(std::min<double>(std::ceil(span / lookahead), kMaxBuckets));
      n = std::max<std::size_t>(n, 1);
    }
    for (std::size_t k = 0; k < std::min(n, buckets_.size()); ++k) buckets_[k].clear();
    if (buckets_.size() < n) buckets_.resize(n);
    used_ = n;
    mins_.assign(n, kNever);
    cursor_ = 0;
    t_begin_ = t_begin;
    t_end_ = t_end;
    scale_ = std::isfinite(span) && span > 0 ? static_cast<double>(n) / span : 0.0;
  }

  // Notes that `id` may hold an event at `time` (>= t_begin).
  void add(double time, EntityId id) {
    if (!(time < t_end_)) return;
    // Never behind the cursor: an entry there would not be popped (none
    // should be; the horizon only grows, and so do the times added).
    const std::size_t k = std::max(bucket(time), cursor_);
    buckets_[k].push_back(Entry{time, id});
    mins_[k] = std::min(mins_[k], time);
  }

  // Removes every entry below `horizon`, calling fn(id) for each (an entity
  // as often as it had entries). Returns how many it removed.
  template <class Fn>
  std::size_t pop_before(double horizon, Fn&& fn) {
    std::size_t popped = 0;
    const std::size_t last = std::max(horizon < t_end_ ? bucket(horizon) : used_ - 1, cursor_);
    for (; cursor_ < last; ++cursor_) {
      for (const Entry& entry : buckets_[cursor_]) fn(entry.id);
      popped += buckets_[cursor_].size();
      buckets_[cursor_].clear();
      mins_[cursor_] = kNever;
    }
    // The horizon's own bucket: keep what is at or after it.
    std::vector<Entry>& partial = buckets_[last];
    double kept_min = kNever;
    std::size_t kept = 0;
    for (const Entry& entry : partial) {
      if (entry.time < horizon) {
        fn(entry.id);
        ++popped;
      } else {
        partial[kept++] = entry;
        kept_min = std::min(kept_min, entry.time);
      }
    }
    partial.resize(kept);
    mins_[last] = kept_min;
    return popped;
  }

  // The earliest entry's time (+inf when empty).
  double earliest() const {
    for (std::size_t k = cursor_; k < used_; ++k) {
      if (!buckets_[k].empty()) return mins_[k];
    }
    return kNever;
  }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  struct Entry {
    double time;
    EntityId id;
  };
  std::size_t bucket(double time) const {
    const double k = (time - t_begin_) * scale_;
    return k < static_cast<double>(used_) ? static_cast<std::size_t>(std::max(k, 0.0)) : used_ - 1;
  }

  std::vector<std::vector<Entry>> buckets_;  // the first used_ are this step's
  std::vector<double> mins_;                 // earliest time in each bucket
  std::size_t used_ = 1;
  std::size_t cursor_ = 0;  // buckets before it are empty
  double t_begin_ = 0.0;
  double t_end_ = 0.0;
  double scale_ = 0.0;  // buckets per unit of time
};

}  // namespace seer
