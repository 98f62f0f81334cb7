#include "aircraft/params.hpp"

#include "seer/workload.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace seer::aircraft {

AircraftParams AircraftParams::from_config(Config& config, bool v1) {
  static const WorkloadDecl decl_v0 = aircraft_workload();
  static const WorkloadDecl decl_v1 = aircraft_v1_workload();
  Params params(v1 ? decl_v1 : decl_v0, config);
  AircraftParams p{};
  p.num_uavs = static_cast<std::uint32_t>(params.integer("num_uavs"));
  p.substeps = static_cast<std::uint32_t>(params.integer("substeps"));
  p.wind_modes = static_cast<std::uint32_t>(params.integer("wind_modes"));
  p.beacon_every = static_cast<std::uint32_t>(params.integer("beacon_every"));
  p.max_neighbors = static_cast<std::uint32_t>(params.integer("max_neighbors"));
  p.k_neighbors = static_cast<std::uint32_t>(params.integer("k_neighbors"));
  if (p.k_neighbors > p.max_neighbors) {
    throw std::invalid_argument("k_neighbors must be <= max_neighbors (" +
                                std::to_string(p.max_neighbors) + "), got " +
                                std::to_string(p.k_neighbors));
  }
  p.wind_seed = static_cast<std::uint64_t>(params.integer("wind_seed"));
  p.dt = params.real("dt");
  p.comm_radius = params.real("comm_radius");
  p.comm_latency = params.real("comm_latency");
  p.safe_radius = params.real("safe_radius");
  p.neighbor_timeout = params.real("neighbor_timeout");
  p.arena_size = params.real_or("arena_size", 6.25 * std::sqrt(static_cast<double>(p.num_uavs)));
  p.ceiling = params.real("ceiling");
  p.gravity = params.real("gravity");
  p.drag = params.real("drag");
  p.wind_speed = params.real("wind_speed");
  p.max_rate = params.real("max_rate");
  p.rate_gain = params.real("rate_gain");
  p.battery_capacity = params.real("battery_capacity");
  p.power_idle = params.real("power_idle");
  p.power_thrust = params.real("power_thrust");
  p.power_rate = params.real("power_rate");
  p.near_miss_penalty = params.real("near_miss_penalty");
  p.energy_weight = params.real("energy_weight");
  p.crash_penalty = params.real("crash_penalty");

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
