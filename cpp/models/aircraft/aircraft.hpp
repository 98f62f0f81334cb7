// aircraft_v0: a swarm of quadrotors flying to their goals, sharing state by
// radio beacons (see WORKLOADS.md and seer_env/envs/aircraft_v0.py).
//
// Events of one step [t_k, t_k + dt), per live UAV:
//   on_step_begin   clears the step's counters, holds a hover command, and
//                   schedules SUBSTEP 0 at t_k (physics runs whether or not
//                   the agent acts);
//   on_action       replaces the command (clipped to [-1, 1]);
//   SUBSTEP j       at t_k + j h: first, if j % beacon_every == 0, a BEACON
//                   (own position, velocity, send time) to every live UAV
//                   within comm_radius in the step-start snapshot, found via
//                   the grid, at now + comm_latency; then one RK4 substep to
//                   t_k + (j+1) h, battery drain, crash checks, and SUBSTEP
//                   j+1 while j+1 < substeps;
//   BEACON          updates the receiver's neighbour table and counts a near
//                   miss when the sender's position, extrapolated to the
//                   receiver's state time, is closer than safe_radius.
// A UAV that hits the ground, leaves the airspace or empties its battery is
// dead: it stops, ignores actions and beacons, and terminates.
#pragma once

#include <cstdint>
#include <memory>

#include "aircraft/dynamics.hpp"
#include "aircraft/params.hpp"
#include "aircraft/spatial_grid.hpp"
#include "aircraft/wind.hpp"
#include "seer/config.hpp"
#include "seer/model.hpp"

namespace seer::aircraft {

inline constexpr std::uint32_t kNoNeighbor = 0xFFFFFFFFu;

// Why a UAV died (info key "crash_cause").
enum CrashCause : std::uint32_t { kAlive = 0, kGround = 1, kOutOfBounds = 2, kBatteryEmpty = 3 };

// The last beacon heard from one UAV.
struct NeighborEntry {
  std::uint32_t id;  // kNoNeighbor: empty slot
  std::uint32_t pad;
  double pos[3];
  double vel[3];
  double t_heard;    // send time of the beacon; -inf for an empty slot
};
static_assert(sizeof(NeighborEntry) == 64, "NeighborEntry must have no padding");

struct UavState {
  double body[kBodyDim];   // position, velocity, quaternion, body rates
  double goal[3];
  double cmd[4];           // this step's action, clipped
  double thrust_acc;       // gravity * (1 + cmd[0])
  double power;            // W drawn during this step
  double energy;           // J left in the battery
  double energy_step;      // J used during this step
  double t_step;           // start of the current step
  double t_state;          // time `body` describes
  double prev_goal_dist;   // distance to the goal at the step start
  std::uint64_t near_misses_total;
  std::uint64_t beacons_total;
  std::uint32_t alive;
  std::uint32_t crash_cause;   // CrashCause
  std::uint32_t crashed_step;  // 1 during the step the UAV died
  std::uint32_t near_misses_step;
  std::uint32_t beacons_step;
  std::uint32_t pad;
  NeighborEntry table[kMaxNeighborSlots];
};
static_assert(sizeof(UavState) == 27 * 8 + 2 * 8 + 6 * 4 + kMaxNeighborSlots * 64,
              "UavState must have no padding");

// What other UAVs (and the grid) may read during the next step.
struct UavPublic {
  double pos[3];
  double vel[3];
  std::uint32_t alive;
  std::uint32_t pad;
};
static_assert(sizeof(UavPublic) == 56, "UavPublic must have no padding");

// Payloads.
struct SubstepPayload {
  std::uint32_t index;  // j
  std::uint32_t pad;
};
struct BeaconPayload {
  std::uint32_t sender;
  std::uint32_t pad;
  double pos[3];
  double vel[3];
  double t_sent;
};
static_assert(sizeof(BeaconPayload) == 64, "BeaconPayload must have no padding");

class AircraftModel final : public ModelBase<AircraftModel, UavState, UavPublic> {
 public:
  static constexpr EventKind kSubstep = 0;
  static constexpr EventKind kBeacon = 1;
  static constexpr double kVelocityScale = 10.0;  // observation scale, m/s
  static constexpr double kObsBound = 100.0;      // observations lie in [-kObsBound, kObsBound]
  static constexpr std::size_t kOwnObs = 17;      // observation entries before the neighbours
  static constexpr std::size_t kStatePerUav = 8;  // env.state() entries per UAV (aircraft_v0)
  static constexpr std::size_t kGoalState = 3;    // aircraft_v1 adds (goal - position) / arena

  // v1: aircraft_v1's declaration (rescaled reward defaults; same dynamics).
  explicit AircraftModel(Config& config, bool v1 = false);

  static UavPublic make_public(const UavState& s);

  void reset_states() override { allocate(spec_.num_entities); }
  void on_init(Context& ctx) override;
  void on_step_begin(Context& ctx) override;
  void on_action(Context& ctx, const ActionView& action) override;
  void on_event(Context& ctx, const Event& event) override;
  void after_snapshot() override;
  void observe(EntityId agent, float* obs) const override;
  double reward(EntityId agent) const override;
  bool terminated(EntityId agent) const override { return state_of(agent).alive == 0; }
  void info(EntityId agent, std::int64_t* out) const override;
  void state(float* out) const override;

  const AircraftParams& params() const { return p_; }

 private:
  std::size_t state_per_uav_ = kStatePerUav;  // kStatePerUav (+ kGoalState in aircraft_v1)
  void set_command(UavState& s, const float* action) const;
  void substep(Context& ctx, const SubstepPayload& payload);
  void send_beacons(Context& ctx, const UavState& s);
  void receive_beacon(Context& ctx, const BeaconPayload& beacon);
  double goal_distance(const UavState& s) const;

  AircraftParams p_;
  WindField wind_;
  SpatialGrid grid_;  // over the last snapshot; written only in after_snapshot
};

std::unique_ptr<Model> make_aircraft(Config& config);
std::unique_ptr<Model> make_aircraft_v1(Config& config);

}  // namespace seer::aircraft
