// The parameters of aircraft_v0, read once from the config and then immutable
// (handlers may read them from any thread).
#pragma once

#include <cstdint>

#include "seer/config.hpp"
#include "seer/workload.hpp"

namespace seer::aircraft {

// Largest neighbour table a UAV state can hold (max_neighbors <= this). A
// compile-time bound because entity states are fixed-size records.
inline constexpr std::uint32_t kMaxNeighborSlots = 32;

// Rigid-body constants of the airframe (a ~1 kg quadrotor). Only the ratios
// enter the dynamics: the gyroscopic coefficients below.
inline constexpr double kInertiaXX = 0.01;  // kg m^2
inline constexpr double kInertiaYY = 0.01;
inline constexpr double kInertiaZZ = 0.02;

struct AircraftParams {
  // Sizes and timing.
  std::uint32_t num_uavs;
  std::uint32_t substeps;
  std::uint32_t wind_modes;
  std::uint32_t beacon_every;
  std::uint32_t k_neighbors;
  std::uint32_t max_neighbors;
  std::uint64_t wind_seed;
  double dt;
  double comm_radius;
  double comm_latency;
  double safe_radius;
  double neighbor_timeout;
  // Airspace.
  double arena_size;  // half-width of the square airspace, metres
  double ceiling;     // metres
  // Physics.
  double gravity;
  double drag;        // quadratic drag per unit mass, 1/m
  double wind_speed;  // overall wind amplitude, m/s
  double max_rate;    // body-rate command at |action| = 1, rad/s
  double rate_gain;   // body-rate controller gain, 1/s
  // Battery, watts and joules.
  double battery_capacity;
  double power_idle;
  double power_thrust;
  double power_rate;
  // Reward weights.
  double near_miss_penalty;
  double energy_weight;
  double crash_penalty;

  // Derived, computed once so every handler uses the same doubles.
  double h;        // substep length dt / substeps
  double half_h;   // h * 0.5
  double sixth_h;  // h / 6
  double gyro_x, gyro_y, gyro_z;  // Euler's equations: (I_yy - I_zz) / I_xx, ...
  double comm_radius_sq, safe_radius_sq;

  // Reads and validates every key; std::invalid_argument names the bad one.
  // v1: aircraft_v1's declaration (the same keys, other reward defaults).
  static AircraftParams from_config(Config& config, bool v1 = false);
};

// The declaration (aircraft/workload.cpp).
WorkloadDecl aircraft_workload();
WorkloadDecl aircraft_v1_workload();

}  // namespace seer::aircraft
