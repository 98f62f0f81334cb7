// Quadrotor rigid-body dynamics and the RK4 substep (the compute of aircraft_v0).
//
// Body state x[13]: position (3), velocity (3), attitude quaternion
// (w, x, y, z) body-to-world, body rates (3). Forces: collective thrust along
// the body z axis, gravity, quadratic drag on the velocity relative to the
// wind. Torques: a body-rate controller tracking the commanded rates, plus
// the gyroscopic term of Euler's equations.
//
// Every expression is written in a fixed evaluation order and compiled
// without FMA contraction: seer_env/testing/reference/aircraft.py repeats the same
// operations in NumPy and gets the same doubles.
#pragma once

#include "aircraft/params.hpp"
#include "aircraft/wind.hpp"

namespace seer::aircraft {

inline constexpr int kBodyDim = 13;
inline constexpr int kPos = 0, kVel = 3, kQuat = 6, kRate = 10;

// The command held during one step.
struct Command {
  double thrust_acc;  // collective thrust / mass, m/s^2
  double rate[3];     // commanded body rates, rad/s
};

// dx/dt at time t.
void body_derivative(const AircraftParams& p, const WindField& wind, double t,
                     const double x[kBodyDim], const Command& cmd, double dx[kBodyDim]);

// One classical RK4 step of length p.h from time t, in place; then the
// quaternion is renormalized.
void rk4_substep(const AircraftParams& p, const WindField& wind, double t, double x[kBodyDim],
                 const Command& cmd);

}  // namespace seer::aircraft
