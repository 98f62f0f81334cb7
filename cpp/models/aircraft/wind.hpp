// The wind field of aircraft_v0: a sum of travelling sinusoidal modes,
//   w(p, t) = sum_m a_m * sin(k_m . p + omega_m t + phase_m),
// evaluated four times per RK4 substep (the compute knob `wind_modes`).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace seer::aircraft {

struct WindMode {
  double ax, ay, az;  // amplitude vector, m/s
  double kx, ky, kz;  // wave vector, rad/m
  double omega;       // angular frequency, rad/s
  double phase;       // rad
};

// Immutable after construction; at() is thread-safe.
class WindField {
 public:
  WindField() = default;
  // Draws `modes` modes of overall amplitude `speed` from the Philox stream
  // (wind_seed, 2^64 - 1): part of the scenario, like a map, not of the
  // episode seed (reset_states() has no random stream). The reference
  // (seer_env/testing/reference/aircraft.py, draw_wind) repeats the recipe.
  WindField(std::uint32_t modes, double speed, std::uint64_t wind_seed);

  // w(p, t) into out[3]. The summation order is part of the model (the
  // NumPy reference sums in the same order).
  void at(const double p[3], double t, double out[3]) const {
    double wx = 0.0, wy = 0.0, wz = 0.0;
    for (const WindMode& m : modes_) {
      const double s = std::sin(m.kx * p[0] + m.ky * p[1] + m.kz * p[2] + m.omega * t + m.phase);
      wx = wx + m.ax * s;
      wy = wy + m.ay * s;
      wz = wz + m.az * s;
    }
    out[0] = wx;
    out[1] = wy;
    out[2] = wz;
  }

  const std::vector<WindMode>& modes() const { return modes_; }

 private:
  std::vector<WindMode> modes_;
};

}  // namespace seer::aircraft
