#include "aircraft/params.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace seer::aircraft {

AircraftParams AircraftParams::from_config(Config& config) {
  AircraftParams p{};
  p.num_uavs = static_cast<std::uint32_t>(config.integer("num_uavs", 256, 1, 1 << 20));
  p.substeps = static_cast<std::uint32_t>(config.integer("substeps", 20, 1, 10000));
  p.wind_modes = static_cast<std::uint32_t>(config.integer("wind_modes", 8, 0, 256));
  p.beacon_every = static_cast<std::uint32_t>(config.integer("beacon_every", 10, 1, 1000000));
  p.max_neighbors = static_cast<std::uint32_t>(
      config.integer("max_neighbors", 16, 1, kMaxNeighborSlots));
  p.k_neighbors =
      static_cast<std::uint32_t>(config.integer("k_neighbors", 4, 0, kMaxNeighborSlots));
  if (p.k_neighbors > p.max_neighbors) {
    throw std::invalid_argument("k_neighbors must be <= max_neighbors (" +
                                std::to_string(p.max_neighbors) + "), got " +
                                std::to_string(p.k_neighbors));
  }
  p.wind_seed = static_cast<std::uint64_t>(config.integer("wind_seed", 0, 0, 1LL << 53));
  p.dt = config.real("dt", 0.1, 0.0, 1e3, /*lo_open=*/true);
  p.comm_radius = config.real("comm_radius", 30.0, 0.0, 1e6, true);
  // 50 ms: a mesh radio's latency; it is also the lookahead, so 2-3
  // synchronization rounds (float rounding of the horizons) per 100 ms step.
  p.comm_latency = config.real("comm_latency", 0.05, 0.0, 1e3, true);
  p.safe_radius = config.real("safe_radius", 3.0, 0.0, 1e6);
  p.neighbor_timeout = config.real("neighbor_timeout", 0.5, 0.0, 1e6);
  // Default airspace grows with the swarm so the density (and the number of
  // beacons per UAV) stays the same: 200 m x 200 m at 256 UAVs.
  p.arena_size = config.real("arena_size", 6.25 * std::sqrt(static_cast<double>(p.num_uavs)),
                             0.0, 1e7, true);
  p.ceiling = config.real("ceiling", 60.0, 0.0, 1e6, true);
  p.gravity = config.real("gravity", 9.81, 0.0, 1e3);
  p.drag = config.real("drag", 0.1, 0.0, 1e3);
  p.wind_speed = config.real("wind_speed", 3.0, 0.0, 1e3);
  p.max_rate = config.real("max_rate", 3.0, 0.0, 1e3, true);
  p.rate_gain = config.real("rate_gain", 20.0, 0.0, 1e4);
  p.battery_capacity = config.real("battery_capacity", 1e5, 0.0, 1e12, true);
  p.power_idle = config.real("power_idle", 20.0, 0.0, 1e9);
  p.power_thrust = config.real("power_thrust", 150.0, 0.0, 1e9);
  p.power_rate = config.real("power_rate", 10.0, 0.0, 1e9);
  p.near_miss_penalty = config.real("near_miss_penalty", 1.0, 0.0, 1e9);
  p.energy_weight = config.real("energy_weight", 1e-3, 0.0, 1e9);
  p.crash_penalty = config.real("crash_penalty", 10.0, 0.0, 1e9);

  p.h = p.dt / static_cast<double>(p.substeps);
  p.half_h = p.h * 0.5;
  p.sixth_h = p.h / 6.0;
  p.gyro_x = (kInertiaYY - kInertiaZZ) / kInertiaXX;
  p.gyro_y = (kInertiaZZ - kInertiaXX) / kInertiaYY;
  p.gyro_z = (kInertiaXX - kInertiaYY) / kInertiaZZ;
  p.comm_radius_sq = p.comm_radius * p.comm_radius;
  p.safe_radius_sq = p.safe_radius * p.safe_radius;
  return p;
}

}  // namespace seer::aircraft
