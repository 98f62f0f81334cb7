#include "aircraft/wind.hpp"

#include <cmath>

#include "seer/rng.hpp"

namespace seer::aircraft {

WindField::WindField(std::uint32_t modes, double speed, std::uint64_t wind_seed) {
  if (modes == 0) return;
  constexpr double kTwoPi = 2.0 * 3.14159265358979323846;  // 2 M_PI (MSVC's <cmath> has no M_PI)
  EntityRng rng(wind_seed, ~std::uint64_t{0});
  const double amp = speed / std::sqrt(static_cast<double>(modes));
  modes_.reserve(modes);
  for (std::uint32_t i = 0; i < modes; ++i) {
    // Mostly horizontal gusts with a little vertical component, wavelengths
    // 40-200 m, periods ~8-30 s. Draw order matters (the reference repeats it).
    const double heading = kTwoPi * rng.uniform();
    const double vertical = 0.2 * (2.0 * rng.uniform() - 1.0);
    const double wavelength = 40.0 + 160.0 * rng.uniform();
    const double direction = kTwoPi * rng.uniform();
    const double tilt = 0.25 * (2.0 * rng.uniform() - 1.0);
    const double omega = 0.2 + 0.6 * rng.uniform();
    const double phase = kTwoPi * rng.uniform();
    const double k = kTwoPi / wavelength;
    WindMode m;
    m.ax = amp * std::cos(heading);
    m.ay = amp * std::sin(heading);
    m.az = amp * vertical;
    m.kx = k * std::cos(direction);
    m.ky = k * std::sin(direction);
    m.kz = k * tilt;
    m.omega = omega;
    m.phase = phase;
    modes_.push_back(m);
  }
}

}  // namespace seer::aircraft
