#include "aircraft/aircraft.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace seer::aircraft {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Observation entries are clipped to [-bound, bound] (NaN -> 0) so that they
// always lie in the declared Box, whatever the config; in practice scaled
// values are of order 1 and the clip never binds.
float obs_value(double v, double bound) {
  if (!(v == v)) return 0.0f;
  return static_cast<float>(v < -bound ? -bound : (v > bound ? bound : v));
}

double clip_action(float a) {
  if (!(a == a)) return 0.0;  // NaN: no command
  const double v = static_cast<double>(a);
  return v < -1.0 ? -1.0 : (v > 1.0 ? 1.0 : v);
}

}  // namespace

AircraftModel::AircraftModel(Config& config, bool v1)
    : p_(AircraftParams::from_config(config, v1)),
      wind_(p_.wind_modes, p_.wind_speed, p_.wind_seed) {
  spec_.name = v1 ? "aircraft_v1" : "aircraft";
  spec_.num_entities = p_.num_uavs;
  spec_.num_agents = p_.num_uavs;
  spec_.agent_prefix = "uav";
  spec_.lookahead = p_.comm_latency;
  spec_.dt = p_.dt;
  spec_.derived_params = {{"arena_size", p_.arena_size}};

  spec_.obs_dim = kOwnObs + 6 * static_cast<std::size_t>(p_.k_neighbors);
  spec_.obs_low.assign(spec_.obs_dim, -static_cast<float>(kObsBound));
  spec_.obs_high.assign(spec_.obs_dim, static_cast<float>(kObsBound));
  for (std::size_t i = 6; i < 10; ++i) {  // unit quaternion
    spec_.obs_low[i] = -1.0f;
    spec_.obs_high[i] = 1.0f;
  }
  spec_.obs_low[16] = 0.0f;  // battery fraction
  spec_.obs_high[16] = 1.0f;

  spec_.action.discrete = false;
  spec_.action.dim = 4;
  spec_.action.low = -1.0f;
  spec_.action.high = 1.0f;
  // aircraft_v1: the goals too (the progress reward depends on them); aircraft_v0's
  // state stays as released.
  state_per_uav_ = kStatePerUav + (v1 ? kGoalState : 0);
  spec_.state_dim = state_per_uav_ * p_.num_uavs;
  spec_.state_low = -static_cast<float>(kObsBound);
  spec_.state_high = static_cast<float>(kObsBound);
  static const WorkloadDecl decl = aircraft_workload();
  spec_.info_keys = decl.info_keys;
  spec_.event_kinds = decl.event_kinds;

  // Pending at once per UAV: its substep event plus beacons in flight to up to
  // max_neighbors others. The spatial grid is capped at 4096^2 cells.
  spec_.memory = MemoryEstimate{spec_.num_entities,
                                sizeof(UavState) + sizeof(UavPublic) + kRuntimeBytesPerEntity + 16,
                                static_cast<std::uint64_t>(p_.num_uavs) * (2 + p_.max_neighbors),
                                4096ull * 4096ull * 4};
  require_memory(spec_, "num_uavs=" + std::to_string(p_.num_uavs) +
                            ", max_neighbors=" + std::to_string(p_.max_neighbors));
  grid_.configure(p_.arena_size, p_.comm_radius);
  allocate(spec_.num_entities);
}

UavPublic AircraftModel::make_public(const UavState& s) {
  UavPublic pub{};
  for (int i = 0; i < 3; ++i) {
    pub.pos[i] = s.body[kPos + i];
    pub.vel[i] = s.body[kVel + i];
  }
  pub.alive = s.alive;
  return pub;
}

double AircraftModel::goal_distance(const UavState& s) const {
  const double dx = s.goal[0] - s.body[kPos];
  const double dy = s.goal[1] - s.body[kPos + 1];
  const double dz = s.goal[2] - s.body[kPos + 2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

void AircraftModel::set_command(UavState& s, const float* action) const {
  for (int i = 0; i < 4; ++i) s.cmd[i] = action == nullptr ? 0.0 : clip_action(action[i]);
  const double lift = 1.0 + s.cmd[0];  // thrust / weight, in [0, 2]; 1 hovers
  s.thrust_acc = p_.gravity * lift;
  s.power = p_.power_idle + p_.power_thrust * lift * lift +
            p_.power_rate * (s.cmd[1] * s.cmd[1] + s.cmd[2] * s.cmd[2] + s.cmd[3] * s.cmd[3]);
}

void AircraftModel::on_init(Context& ctx) {
  UavState& s = self_state(ctx);
  EntityRng& rng = ctx.rng();
  // Start and goal uniform in the inner 80% of the airspace, 30-70% of the
  // ceiling; the reference draws in the same order.
  const double spread = 0.8 * p_.arena_size;
  for (double* point : {s.body + kPos, s.goal}) {
    point[0] = spread * (2.0 * rng.uniform() - 1.0);
    point[1] = spread * (2.0 * rng.uniform() - 1.0);
    point[2] = p_.ceiling * (0.3 + 0.4 * rng.uniform());
  }
  s.body[kQuat] = 1.0;  // level, at rest
  s.energy = p_.battery_capacity;
  s.alive = 1;
  s.prev_goal_dist = goal_distance(s);
  set_command(s, nullptr);
  for (NeighborEntry& entry : s.table) {
    entry.id = kNoNeighbor;
    entry.t_heard = -kInf;
  }
}

void AircraftModel::on_step_begin(Context& ctx) {
  UavState& s = self_state(ctx);
  s.crashed_step = 0;
  s.near_misses_step = 0;
  s.beacons_step = 0;
  s.energy_step = 0.0;
  s.t_step = ctx.now();
  s.prev_goal_dist = goal_distance(s);
  set_command(s, nullptr);  // agents that do not act hover
  if (s.alive) ctx.schedule(ctx.self(), ctx.now(), kSubstep, SubstepPayload{0, 0});
}

void AircraftModel::on_action(Context& ctx, const ActionView& action) {
  UavState& s = self_state(ctx);
  if (s.alive) set_command(s, action.box);
}

void AircraftModel::on_event(Context& ctx, const Event& event) {
  switch (event.kind) {
    case kSubstep:
      substep(ctx, event.as<SubstepPayload>());
      break;
    case kBeacon:
      receive_beacon(ctx, event.as<BeaconPayload>());
      break;
    default:
      break;
  }
}

void AircraftModel::substep(Context& ctx, const SubstepPayload& payload) {
  UavState& s = self_state(ctx);
  if (!s.alive) return;
  const std::uint32_t j = payload.index;
  if (j % p_.beacon_every == 0) send_beacons(ctx, s);

  const Command cmd{s.thrust_acc, {p_.max_rate * s.cmd[1], p_.max_rate * s.cmd[2],
                                   p_.max_rate * s.cmd[3]}};
  rk4_substep(p_, wind_, ctx.now(), s.body, cmd);
  const double next_time = s.t_step + static_cast<double>(j + 1) * p_.h;
  s.t_state = next_time;
  const double used = s.power * p_.h;
  s.energy = s.energy - used;
  s.energy_step = s.energy_step + used;

  const double x = s.body[kPos], y = s.body[kPos + 1], z = s.body[kPos + 2];
  std::uint32_t cause = kAlive;
  if (!(z >= 0.0)) {
    cause = kGround;  // NaN lands here too: a blown-up state is a crash
  } else if (!(std::fabs(x) <= p_.arena_size && std::fabs(y) <= p_.arena_size &&
               z <= p_.ceiling)) {
    cause = kOutOfBounds;
  } else if (s.energy <= 0.0) {
    cause = kBatteryEmpty;
  }
  if (s.energy < 0.0) s.energy = 0.0;
  if (cause != kAlive) {
    s.alive = 0;
    s.crash_cause = cause;
    s.crashed_step = 1;
    return;
  }
  if (j + 1 < p_.substeps) ctx.schedule(ctx.self(), next_time, kSubstep, SubstepPayload{j + 1, 0});
}

void AircraftModel::send_beacons(Context& ctx, const UavState& s) {
  const EntityId self = ctx.self();
  BeaconPayload beacon{};
  beacon.sender = self;
  for (int i = 0; i < 3; ++i) {
    beacon.pos[i] = s.body[kPos + i];
    beacon.vel[i] = s.body[kVel + i];
  }
  beacon.t_sent = ctx.now();
  const double arrival = ctx.earliest_cross_time();  // now + comm_latency
  // Recipients come from the step-start snapshot: positions that every
  // handler sees identically, whatever the execution order.
  const UavPublic& me = snapshot(self);
  grid_.for_each_near(me.pos[0], me.pos[1], [&](std::uint32_t other) {
    if (other == self) return;
    const UavPublic& o = snapshot(other);
    const double dx = o.pos[0] - me.pos[0], dy = o.pos[1] - me.pos[1], dz = o.pos[2] - me.pos[2];
    if (dx * dx + dy * dy + dz * dz <= p_.comm_radius_sq) {
      ctx.schedule(other, arrival, kBeacon, beacon);
    }
  });
}

void AircraftModel::receive_beacon(Context& ctx, const BeaconPayload& b) {
  UavState& s = self_state(ctx);
  if (!s.alive) return;
  ++s.beacons_step;
  ++s.beacons_total;

  // The sender's entry, else the stalest slot (empty slots are -inf; the
  // first of equals wins).
  std::uint32_t slot = kMaxNeighborSlots;
  for (std::uint32_t i = 0; i < p_.max_neighbors; ++i) {
    if (s.table[i].id == b.sender) {
      slot = i;
      break;
    }
  }
  if (slot == kMaxNeighborSlots) {
    slot = 0;
    for (std::uint32_t i = 1; i < p_.max_neighbors; ++i) {
      if (s.table[i].t_heard < s.table[slot].t_heard) slot = i;
    }
  }
  NeighborEntry& e = s.table[slot];
  e.id = b.sender;
  e.pad = 0;
  for (int i = 0; i < 3; ++i) {
    e.pos[i] = b.pos[i];
    e.vel[i] = b.vel[i];
  }
  e.t_heard = b.t_sent;

  // Near miss: the sender dead-reckoned to the time of our own state.
  const double lag = s.t_state - b.t_sent;
  const double dx = b.pos[0] + b.vel[0] * lag - s.body[kPos];
  const double dy = b.pos[1] + b.vel[1] * lag - s.body[kPos + 1];
  const double dz = b.pos[2] + b.vel[2] * lag - s.body[kPos + 2];
  if (dx * dx + dy * dy + dz * dz < p_.safe_radius_sq) {
    ++s.near_misses_step;
    ++s.near_misses_total;
  }
}

void AircraftModel::after_snapshot() {
  grid_.build(spec_.num_entities, [this](std::uint32_t i, double* x, double* y) {
    const UavPublic& pub = snapshot(i);
    *x = pub.pos[0];
    *y = pub.pos[1];
    return pub.alive != 0;
  });
}

void AircraftModel::observe(EntityId agent, float* obs) const {
  const UavState& s = state_of(agent);
  const double* pos = s.body + kPos;
  const double* vel = s.body + kVel;
  for (int i = 0; i < 3; ++i) {
    obs[i] = obs_value(pos[i] / p_.arena_size, kObsBound);
    obs[3 + i] = obs_value(vel[i] / kVelocityScale, kObsBound);
    obs[10 + i] = obs_value(s.body[kRate + i] / p_.max_rate, kObsBound);
    obs[13 + i] = obs_value((s.goal[i] - pos[i]) / p_.arena_size, kObsBound);
  }
  for (int i = 0; i < 4; ++i) obs[6 + i] = obs_value(s.body[kQuat + i], 1.0);
  obs[16] = obs_value(s.energy / p_.battery_capacity, 1.0);

  // The k nearest fresh table entries, nearest first (ties: lower slot).
  double dist[kMaxNeighborSlots];
  for (std::uint32_t i = 0; i < p_.max_neighbors; ++i) {
    const NeighborEntry& e = s.table[i];
    dist[i] = kInf;
    if (e.id != kNoNeighbor && s.t_state - e.t_heard <= p_.neighbor_timeout) {
      const double dx = e.pos[0] - pos[0], dy = e.pos[1] - pos[1], dz = e.pos[2] - pos[2];
      dist[i] = dx * dx + dy * dy + dz * dz;
    }
  }
  float* out = obs + kOwnObs;
  for (std::uint32_t k = 0; k < p_.k_neighbors; ++k, out += 6) {
    std::uint32_t best = kMaxNeighborSlots;
    for (std::uint32_t i = 0; i < p_.max_neighbors; ++i) {
      if (dist[i] < kInf && (best == kMaxNeighborSlots || dist[i] < dist[best])) best = i;
    }
    if (best == kMaxNeighborSlots) {
      for (int i = 0; i < 6; ++i) out[i] = 0.0f;
      continue;
    }
    const NeighborEntry& e = s.table[best];
    dist[best] = kInf;
    for (int i = 0; i < 3; ++i) {
      out[i] = obs_value((e.pos[i] - pos[i]) / p_.comm_radius, kObsBound);
      out[3 + i] = obs_value((e.vel[i] - vel[i]) / kVelocityScale, kObsBound);
    }
  }
}

double AircraftModel::reward(EntityId agent) const {
  const UavState& s = state_of(agent);
  const bool crashed = s.crashed_step != 0 && s.crash_cause != kBatteryEmpty;
  return s.prev_goal_dist - goal_distance(s) -
         p_.near_miss_penalty * static_cast<double>(s.near_misses_step) -
         p_.energy_weight * s.energy_step - (crashed ? p_.crash_penalty : 0.0);
}

void AircraftModel::info(EntityId agent, std::int64_t* out) const {
  const UavState& s = state_of(agent);
  std::int64_t fresh = 0;
  for (std::uint32_t i = 0; i < p_.max_neighbors; ++i) {
    const NeighborEntry& e = s.table[i];
    if (e.id != kNoNeighbor && s.t_state - e.t_heard <= p_.neighbor_timeout) ++fresh;
  }
  out[0] = s.near_misses_step;
  out[1] = static_cast<std::int64_t>(s.near_misses_total);
  out[2] = s.beacons_step;
  out[3] = fresh;
  out[4] = s.crash_cause;
}

void AircraftModel::state(float* out) const {
  for (std::uint32_t e = 0; e < spec_.num_entities; ++e, out += state_per_uav_) {
    const UavState& s = state_of(e);
    for (int i = 0; i < 3; ++i) {
      out[i] = obs_value(s.body[kPos + i] / p_.arena_size, kObsBound);
      out[3 + i] = obs_value(s.body[kVel + i] / kVelocityScale, kObsBound);
    }
    out[6] = static_cast<float>(s.energy / p_.battery_capacity);
    out[7] = static_cast<float>(s.alive);
    if (state_per_uav_ == kStatePerUav) continue;
    for (int i = 0; i < 3; ++i) {  // as observation entries 13-15
      out[kStatePerUav + i] =
          obs_value((s.goal[i] - s.body[kPos + i]) / p_.arena_size, kObsBound);
    }
  }
}

std::unique_ptr<Model> make_aircraft(Config& config) {
  return std::make_unique<AircraftModel>(config);
}

std::unique_ptr<Model> make_aircraft_v1(Config& config) {
  return std::make_unique<AircraftModel>(config, /*v1=*/true);
}

}  // namespace seer::aircraft
