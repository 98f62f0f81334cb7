#include "aircraft/dynamics.hpp"

#include <cmath>

namespace seer::aircraft {

void body_derivative(const AircraftParams& p, const WindField& wind, double t,
                     const double x[kBodyDim], const Command& cmd, double dx[kBodyDim]) {
  double w[3];
  wind.at(x + kPos, t, w);
  const double vx = x[kVel], vy = x[kVel + 1], vz = x[kVel + 2];
  const double qw = x[kQuat], qx = x[kQuat + 1], qy = x[kQuat + 2], qz = x[kQuat + 3];
  const double ox = x[kRate], oy = x[kRate + 1], oz = x[kRate + 2];

  // Air-relative velocity and quadratic drag.
  const double rx = vx - w[0], ry = vy - w[1], rz = vz - w[2];
  const double speed = std::sqrt(rx * rx + ry * ry + rz * rz);
  const double ds = p.drag * speed;
  // Body z axis in the world frame: the thrust direction.
  const double bx = 2.0 * (qx * qz + qw * qy);
  const double by = 2.0 * (qy * qz - qw * qx);
  const double bz = 1.0 - 2.0 * (qx * qx + qy * qy);
  const double ta = cmd.thrust_acc;

  dx[kPos] = vx;
  dx[kPos + 1] = vy;
  dx[kPos + 2] = vz;
  dx[kVel] = ta * bx - ds * rx;
  dx[kVel + 1] = ta * by - ds * ry;
  dx[kVel + 2] = ta * bz - ds * rz - p.gravity;
  // q' = q (x) (0, omega) / 2.
  dx[kQuat] = 0.5 * (-qx * ox - qy * oy - qz * oz);
  dx[kQuat + 1] = 0.5 * (qw * ox + qy * oz - qz * oy);
  dx[kQuat + 2] = 0.5 * (qw * oy - qx * oz + qz * ox);
  dx[kQuat + 3] = 0.5 * (qw * oz + qx * oy - qy * ox);
  // Rate controller plus gyroscopic coupling.
  dx[kRate] = p.rate_gain * (cmd.rate[0] - ox) + p.gyro_x * oy * oz;
  dx[kRate + 1] = p.rate_gain * (cmd.rate[1] - oy) + p.gyro_y * oz * ox;
  dx[kRate + 2] = p.rate_gain * (cmd.rate[2] - oz) + p.gyro_z * ox * oy;
}

void rk4_substep(const AircraftParams& p, const WindField& wind, double t, double x[kBodyDim],
                 const Command& cmd) {
  double k1[kBodyDim], k2[kBodyDim], k3[kBodyDim], k4[kBodyDim], y[kBodyDim];
  const double h = p.h, hh = p.half_h;
  body_derivative(p, wind, t, x, cmd, k1);
  for (int i = 0; i < kBodyDim; ++i) y[i] = x[i] + hh * k1[i];
  body_derivative(p, wind, t + hh, y, cmd, k2);
  for (int i = 0; i < kBodyDim; ++i) y[i] = x[i] + hh * k2[i];
  body_derivative(p, wind, t + hh, y, cmd, k3);
  for (int i = 0; i < kBodyDim; ++i) y[i] = x[i] + h * k3[i];
  body_derivative(p, wind, t + h, y, cmd, k4);
  for (int i = 0; i < kBodyDim; ++i) {
    x[i] = x[i] + p.sixth_h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
  }
  double* q = x + kQuat;
  const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; ++i) q[i] = q[i] / norm;
}

}  // namespace seer::aircraft
