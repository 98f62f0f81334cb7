#include "pcs/traffic.hpp"

#include <algorithm>
#include <cmath>

namespace seer {
namespace {

constexpr double kTwoPi = 6.283185307179586;

// Distance between a and b on a ring of `size` cells.
double ring_distance(double a, double b, double size) {
  const double d = std::fabs(a - b);
  return std::min(d, size - d);
}

}  // namespace

PcsTraffic::PcsTraffic(Params& params, std::uint32_t width, std::uint32_t height)
    : width_(width), height_(height) {
  day_minutes_ = params.real("day_minutes");
  daily_swing_ = params.real("daily_swing");
  hotspot_gain_ = params.real("hotspot_gain");
  hotspot_radius_ = params.real("hotspot_radius");
  rush_mobility_ = params.real("rush_mobility");
  varies_ = daily_swing_ != 0.0 || hotspot_gain_ != 0.0 || rush_mobility_ != 0.0;
  max_load_ = (1.0 + daily_swing_) * (1.0 + hotspot_gain_);
  // At a rush hour the other one is 9 hours away.
  max_mobility_ = 1.0 + rush_mobility_ * (1.0 + std::exp(-0.5 * 9.0 * 9.0));
}

double PcsTraffic::day_fraction(double t) const {
  const double f = t / day_minutes_;
  return f - std::floor(f);
}

double PcsTraffic::load(std::uint32_t cell, double t) const {
  const double phase = day_fraction(t);
  double m = 1.0 - daily_swing_ * std::cos(kTwoPi * phase);
  if (hotspot_gain_ != 0.0) {
    const double x = static_cast<double>(cell % width_);
    const double y = static_cast<double>(cell / width_);
    const double dx = ring_distance(x, phase * width_, width_);
    const double dy = ring_distance(y, phase * height_, height_);
    const double r2 = hotspot_radius_ * hotspot_radius_;
    m *= 1.0 + hotspot_gain_ * std::exp(-(dx * dx + dy * dy) / (2.0 * r2));
  }
  return m;
}

double PcsTraffic::mobility(double t) const {
  if (rush_mobility_ == 0.0) return 1.0;
  const double hour = 24.0 * day_fraction(t);
  const auto rush = [hour](double peak) {
    const double d = ring_distance(hour, peak, 24.0);
    return std::exp(-0.5 * d * d);
  };
  return 1.0 + rush_mobility_ * (rush(8.0) + rush(17.0));
}

}  // namespace seer
