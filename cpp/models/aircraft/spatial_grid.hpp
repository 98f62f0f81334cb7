// A uniform 2-D grid over the airspace (x, y), rebuilt once per step from the
// boundary snapshot, so that a beacon's recipients are found by scanning the
// 3 x 3 cells around the sender instead of all UAVs.
//
// build() is serial (after_snapshot); for_each_near() only reads and is
// thread-safe between builds. Within a cell, members are in increasing id
// (a stable counting sort), so queries visit candidates in a fixed order and
// the events they schedule get the same sequence numbers on every executor.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace seer::aircraft {

class SpatialGrid {
 public:
  // Covers [-half_width, half_width]^2 with square cells of at least
  // `min_cell` (the query radius); positions outside are clamped to the
  // border cells, which keeps queries correct. Allocates.
  void configure(double half_width, double min_cell) {
    half_width_ = half_width;
    constexpr double kMaxCellsPerAxis = 4096.0;  // caps memory for tiny radii
    const double span = 2.0 * half_width;
    cells_per_axis_ = static_cast<std::int64_t>(
        std::min(kMaxCellsPerAxis, std::max(1.0, std::floor(span / min_cell))));
    cell_size_ = span / static_cast<double>(cells_per_axis_);
    cell_start_.assign(static_cast<std::size_t>(cells_per_axis_ * cells_per_axis_) + 1, 0);
  }

  // Rebuilds from `n` items; position(i, &x, &y) returns false to leave i out.
  // Does not allocate after the first build of a given n.
  template <class PositionFn>
  void build(std::uint32_t n, PositionFn&& position) {
    cell_of_.resize(n);
    members_.resize(n);
    std::fill(cell_start_.begin(), cell_start_.end(), 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      double x, y;
      if (!position(i, &x, &y)) {
        cell_of_[i] = -1;
        continue;
      }
      cell_of_[i] = cell_index(axis_index(x), axis_index(y));
      ++cell_start_[static_cast<std::size_t>(cell_of_[i]) + 1];
    }
    for (std::size_t c = 1; c < cell_start_.size(); ++c) cell_start_[c] += cell_start_[c - 1];
    fill_.assign(cell_start_.begin(), cell_start_.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (cell_of_[i] >= 0) members_[fill_[static_cast<std::size_t>(cell_of_[i])]++] = i;
    }
  }

  // Calls fn(id) for every member of the 3 x 3 cells around (x, y): a
  // superset of the members within one cell size of (x, y).
  template <class Fn>
  void for_each_near(double x, double y, Fn&& fn) const {
    const std::int64_t cx = axis_index(x), cy = axis_index(y);
    for (std::int64_t gy = std::max<std::int64_t>(cy - 1, 0);
         gy <= std::min(cy + 1, cells_per_axis_ - 1); ++gy) {
      for (std::int64_t gx = std::max<std::int64_t>(cx - 1, 0);
           gx <= std::min(cx + 1, cells_per_axis_ - 1); ++gx) {
        const std::int64_t c = cell_index(gx, gy);
        for (std::uint32_t k = cell_start_[c]; k < cell_start_[c + 1]; ++k) fn(members_[k]);
      }
    }
  }

 private:
  std::int64_t axis_index(double v) const {
    const double f = std::floor((v + half_width_) / cell_size_);
    if (!(f >= 0.0)) return 0;  // also catches NaN
    return std::min(static_cast<std::int64_t>(std::min(f, 1e15)), cells_per_axis_ - 1);
  }
  std::int64_t cell_index(std::int64_t gx, std::int64_t gy) const {
    return gy * cells_per_axis_ + gx;
  }

  double half_width_ = 1.0;
  double cell_size_ = 1.0;
  std::int64_t cells_per_axis_ = 1;
  std::vector<std::uint32_t> cell_start_;  // prefix sums, one per cell + 1
  std::vector<std::uint32_t> fill_;        // build scratch
  std::vector<std::int64_t> cell_of_;      // build scratch: cell of each item, -1 if left out
  std::vector<std::uint32_t> members_;     // item ids grouped by cell, increasing within a cell
};

}  // namespace seer::aircraft
