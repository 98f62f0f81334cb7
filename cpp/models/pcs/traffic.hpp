// PCS traffic that varies in time and space (the pcs_v1 task).
//
// pcs_v0's phones draw every call interval and every move interval from the
// same exponential means everywhere and at all times, so one constant guard
// count is as good as any policy. Real networks have a daily profile, hot
// spots that move (commuters, events) and areas where phones move fast
// (highways). PcsTraffic turns the two means into pure functions of
// (cell, time):
//
//   call rate multiplier  load(c, t) = (1 - daily_swing * cos(2 pi t / day))
//                                    * (1 + hotspot_gain * exp(-d^2 / (2 r^2)))
//     with d the torus distance from cell c to the hot spot's centre, which
//     crosses the grid diagonally once per day (x and y = frac(t/day) * size).
//   move rate multiplier  mobility(t) = 1 + rush_mobility * (rush(8 h) + rush(17 h))
//     with rush(h0) = exp(-(h - h0)^2 / 2), h the hour of the day (day_minutes
//     is 24 such hours): everyone moves more at the two rush hours. Mobility
//     is uniform in space on purpose: with a symmetric random walk, fast
//     areas would be emptied of phones (the walk's stationary density is
//     inversely proportional to the move rate).
//
// Next-event times are drawn by thinning (Lewis and Shedler): candidates at
// the largest rate, each kept with probability multiplier(t) / max, so the
// call and move processes are exact non-homogeneous Poisson processes. A
// call's rate is that of the cell drawing it. Only the handling cell's random
// stream is used, so handlers stay entity-local and deterministic. With every knob at its default
// (swing 0, gains 0) `varies()` is false and the model draws from
// the constant means bit for bit as pcs_v0 does.
#pragma once

#include <cstdint>

#include "seer/workload.hpp"

namespace seer {

class PcsTraffic {
 public:
  PcsTraffic() = default;
  // Reads day_minutes, daily_swing, hotspot_gain, hotspot_radius and
  // rush_mobility (declared in pcs_v1's table, pcs/workload.cpp).
  PcsTraffic(Params& params, std::uint32_t width, std::uint32_t height);

  // False when every multiplier is exactly 1 (pcs_v0's constant traffic).
  bool varies() const { return varies_; }
  // Call-rate multiplier of `cell` at time `t` (minutes), > 0.
  double load(std::uint32_t cell, double t) const;
  // Move-rate multiplier at time `t` (minutes), >= 1.
  double mobility(double t) const;
  // Upper bounds of load() and mobility() (the thinning rates).
  double max_load() const { return max_load_; }
  double max_mobility() const { return max_mobility_; }
  // Time of day as a fraction of the day in [0, 1).
  double day_fraction(double t) const;

 private:
  std::uint32_t width_ = 1, height_ = 1;
  double day_minutes_ = 1440.0;
  double daily_swing_ = 0.0;
  double hotspot_gain_ = 0.0;
  double hotspot_radius_ = 2.0;
  double rush_mobility_ = 0.0;
  double max_load_ = 1.0, max_mobility_ = 1.0;
  bool varies_ = false;
};

}  // namespace seer
