#include "pcs/pcs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace seer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kObsDim = 10;  // own busy, guard, 4 counters, 4 neighbours' busy
constexpr std::size_t kTimeDims = 2;  // sin and cos of the time of day (time_features)
constexpr double kTwoPi = 6.283185307179586;
// Two handlers draw in a loop: the moves of an idle phone before its next
// call (call_interval / move_interval on average) and the busy lines of a
// call (call_duration / call_interval). Validation bounds those means; the
// cap stops a loop the clock can no longer advance (a mean below the
// resolution of the time), so no handler runs unbounded.
constexpr double kMaxMeanDraws = 1e4;
constexpr std::uint64_t kMaxLoopDraws = std::uint64_t{1} << 22;

void require_mean_ratio(const char* small, double small_value, const char* large,
                        double large_value) {
  if (large_value / small_value > kMaxMeanDraws) {
    throw std::invalid_argument(
        std::string(small) + " must be >= " + large + " / 1e4 (one handler draws " + large +
        " / " + small + " times on average), got " + small + "=" + std::to_string(small_value) +
        ", " + large + "=" + std::to_string(large_value));
  }
}

}  // namespace

PcsModel::PcsModel(Config& config, PcsVersion version) {
  static const WorkloadDecl decl_v0 = pcs_workload();
  static const WorkloadDecl decl_v1 = pcs_v1_workload();
  static const WorkloadDecl decl_admission = pcs_admission_workload();
  // pcs_admission has pcs_v1's traffic and observation.
  const bool v1 = version != PcsVersion::kV0;
  admission_ = version == PcsVersion::kAdmission;
  const WorkloadDecl& decl = admission_ ? decl_admission : v1 ? decl_v1 : decl_v0;
  Params params(decl, config);
  spec_.name = decl.name;
  width_ = static_cast<std::uint32_t>(params.integer("width"));
  height_ = static_cast<std::uint32_t>(params.integer("height"));
  channels_ = static_cast<std::uint32_t>(params.integer("channels"));
  phones_per_cell_ = static_cast<std::uint32_t>(params.integer("phones_per_cell"));
  call_interval_ = params.real("call_interval");
  call_duration_ = params.real("call_duration");
  move_interval_ = params.real("move_interval");
  spec_.lookahead = params.real("handoff_delay");
  spec_.dt = params.real("step_minutes");
  handoff_weight_ = params.real("handoff_weight");
  // pcs_v1 only: varying traffic, time of day observed, counts capped.
  time_features_ = v1;
  count_cap_ = v1 ? params.real("count_cap") : 0.0;
  if (v1) traffic_ = PcsTraffic(params, width_, height_);
  require_mean_ratio("move_interval", move_interval_, "call_interval", call_interval_);
  // An idle phone about to call in another cell walks on until now + L.
  require_mean_ratio("move_interval", move_interval_, "handoff_delay", spec_.lookahead);
  require_mean_ratio("call_interval", call_interval_, "call_duration", call_duration_);
  const std::uint64_t phones = std::uint64_t{width_} * height_ * phones_per_cell_;
  if (phones > 100'000'000) {
    throw std::invalid_argument(
        "phones_per_cell * width * height must be <= 1e8 (pending events), got " +
        std::to_string(phones));
  }
  count_scale_ = call_interval_ / (static_cast<double>(phones_per_cell_) * spec_.dt);

  spec_.num_entities = width_ * height_;
  spec_.num_agents = spec_.num_entities;
  spec_.agent_prefix = "cell";
  spec_.obs_dim = kObsDim + (time_features_ ? kTimeDims : 0);
  const float cap = count_cap_ > 0.0 ? static_cast<float>(count_cap_)
                                     : std::numeric_limits<float>::infinity();
  spec_.obs_low.assign(kObsDim, 0.0f);
  spec_.obs_high = {1.0f, 1.0f, cap, cap, cap, cap, 1.0f, 1.0f, 1.0f, 1.0f};
  if (time_features_) {
    spec_.obs_low.insert(spec_.obs_low.end(), kTimeDims, -1.0f);
    spec_.obs_high.insert(spec_.obs_high.end(), kTimeDims, 1.0f);
  }
  // pcs_admission: 0 refuses the arrival, 1 admits it.
  spec_.action = ActionSpec{/*discrete=*/true, /*n=*/admission_ ? 2 : channels_ + 1, 0, 0.0f, 0.0f};
  spec_.decisions = decl.decisions;
  // pcs_v1: the time of day too (the traffic, so the reward, depends on it).
  spec_.state_dim = 2 * static_cast<std::size_t>(spec_.num_entities) +
                    (time_features_ ? kTimeDims : 0);
  spec_.state_low = time_features_ ? -1.0f : 0.0f;
  spec_.state_high = 1.0f;
  spec_.info_keys = decl.info_keys;
  spec_.total_keys = decl.total_keys;
  spec_.event_kinds = decl.event_kinds;
  // One pending event per phone. Refuse what cannot fit before allocating.
  spec_.memory = MemoryEstimate{spec_.num_entities,
                                sizeof(PcsState) + sizeof(PcsPublic) + kRuntimeBytesPerEntity,
                                static_cast<std::uint64_t>(spec_.num_entities) * phones_per_cell_};
  require_memory(spec_, "width=" + std::to_string(width_) + ", height=" + std::to_string(height_) +
                            ", phones_per_cell=" + std::to_string(phones_per_cell_));
  allocate(spec_.num_entities);
}

EntityId PcsModel::neighbour(EntityId cell, std::uint64_t direction) const {
  std::uint32_t x = cell % width_;
  std::uint32_t y = cell / width_;
  switch (direction) {
    case 0: x = (x + width_ - 1) % width_; break;
    case 1: x = (x + 1) % width_; break;
    case 2: y = (y + height_ - 1) % height_; break;
    default: y = (y + 1) % height_; break;
  }
  return y * width_ + x;
}

std::uint32_t PcsModel::free_channels(const PcsState& s) const {
  return channels_ - static_cast<std::uint32_t>(set_bit_count(s.channel_mask));
}

void PcsModel::take_channel(PcsState& s, PcsPhone& phone) {
  // Lowest free channel: deterministic, and what the reference does.
  const std::uint64_t free_mask = ~s.channel_mask;
  phone.channel = static_cast<std::uint32_t>(lowest_set_bit(free_mask));
  s.channel_mask |= std::uint64_t{1} << phone.channel;
}

void PcsModel::release_channel(PcsState& s, PcsPhone& phone) {
  if (phone.channel >= channels_ || !(s.channel_mask >> phone.channel & 1u)) {
    throw std::logic_error("phone " + std::to_string(phone.id) + " releases channel " +
                           std::to_string(phone.channel) + " it does not hold");
  }
  s.channel_mask &= ~(std::uint64_t{1} << phone.channel);
  phone.channel = kNoChannel;
}

void PcsModel::on_init(Context& ctx) {
  for (std::uint32_t i = 0; i < phones_per_cell_; ++i) {
    PcsPhone phone{};
    phone.id = ctx.self() * phones_per_cell_ + i;
    phone.channel = kNoChannel;
    phone.call_end = kInf;
    phone.next_call = next_call_time(ctx, ctx.self(), ctx.now());
    phone.next_move = next_move_time(ctx, ctx.now());
    schedule_idle(ctx, phone);
  }
}

void PcsModel::on_step_begin(Context& ctx) {
  PcsState& s = self_state(ctx);
  s.step = PcsCounters{};
  if (time_features_) s.clock = static_cast<std::uint32_t>(std::llround(ctx.now() / spec_.dt)) + 1;
}

void PcsModel::on_action(Context& ctx, const ActionView& action) {
  if (admission_) {
    if (action.discrete != 0 && action.discrete != 1) {
      throw std::invalid_argument("admission must be 0 (refuse) or 1 (admit), got " +
                                  std::to_string(action.discrete));
    }
    PcsState& s = self_state(ctx);
    s.guard |= kAnswered | (action.discrete == 1 ? kAdmit : 0u);
    return;
  }
  if (action.discrete < 0 || action.discrete > static_cast<std::int64_t>(channels_)) {
    throw std::invalid_argument("guard channels must be in [0, " + std::to_string(channels_) +
                                "], got " + std::to_string(action.discrete));
  }
  self_state(ctx).guard = static_cast<std::uint32_t>(action.discrete);
}

double PcsModel::next_call_time(Context& ctx, EntityId cell, double t) const {
  if (!traffic_.varies()) return t + ctx.rng().exponential(call_interval_);
  const double top = traffic_.max_load();
  for (;;) {
    t += ctx.rng().exponential(call_interval_ / top);
    if (ctx.rng().uniform() * top <= traffic_.load(cell, t)) return t;
  }
}

double PcsModel::next_move_time(Context& ctx, double t) const {
  if (!traffic_.varies()) return t + ctx.rng().exponential(move_interval_);
  const double top = traffic_.max_mobility();
  for (;;) {
    t += ctx.rng().exponential(move_interval_ / top);
    if (ctx.rng().uniform() * top <= traffic_.mobility(t)) return t;
  }
}

void PcsModel::schedule_idle(Context& ctx, PcsPhone phone) {
  const EntityId self = ctx.self();
  EntityId cell = self;
  std::uint64_t draws = 0;
  for (;;) {
    while (phone.next_move < phone.next_call) {
      if (++draws > kMaxLoopDraws) throw_stalled("moves", phone, phone.next_move);
      cell = neighbour(cell, ctx.rng().below(4));
      phone.next_move = next_move_time(ctx, phone.next_move);
    }
    // The deviation (header): nothing reaches another cell before now + L,
    // nothing reaches this one before now.
    const double earliest = cell == self ? ctx.now() : ctx.earliest_cross_time();
    if (phone.next_call >= earliest) break;
    phone.next_call = earliest;
  }
  ctx.schedule(cell, phone.next_call, kNextCall, phone);
}

void PcsModel::throw_stalled(const char* what, const PcsPhone& phone, double t) {
  throw std::runtime_error("pcs: phone " + std::to_string(phone.id) + " drew more than " +
                           std::to_string(kMaxLoopDraws) + " " + what + " in one handler (at t=" +
                           std::to_string(t) +
                           "): the clock no longer resolves the configured mean intervals");
}

void PcsModel::schedule_in_call(Context& ctx, const PcsPhone& phone) {
  if (phone.next_move < phone.call_end) {
    ctx.schedule(ctx.self(), phone.next_move, kHandoffOut, phone);
  } else {
    ctx.schedule(ctx.self(), phone.call_end, kCallEnd, phone);
  }
}

void PcsModel::on_event(Context& ctx, const Event& event) {
  PcsState& s = self_state(ctx);
  PcsPhone phone = event.as<PcsPhone>();
  count(s, &PcsCounters::events);
  switch (event.kind) {
    case kNextCall: {
      if (admission_ && free_channels(s) > 0) {
        ask(ctx, s, phone, kAdmitCall);
        return;
      }
      // pcs_admission holds no guard channels: its cells decide per call.
      arrive_call(ctx, s, phone, free_channels(s) > (admission_ ? 0u : s.guard));
      return;
    }
    case kCallEnd:
      release_channel(s, phone);
      phone.call_end = kInf;
      schedule_idle(ctx, phone);
      return;
    case kHandoffOut: {
      release_channel(s, phone);
      const EntityId target = neighbour(ctx.self(), ctx.rng().below(4));
      ctx.schedule(target, ctx.earliest_cross_time(), kHandoffIn, phone);
      return;
    }
    case kHandoffIn:
      if (admission_ && free_channels(s) > 0) {
        ask(ctx, s, phone, kAdmitHandoff);
        return;
      }
      arrive_handoff(ctx, s, phone, free_channels(s) > 0);
      return;
    case kAdmitCall:
    case kAdmitHandoff:
      if (!admission_) break;
      on_admission(ctx, s, phone, event.kind);
      return;
    default:
      break;
  }
  throw std::logic_error("unknown event kind " + std::to_string(event.kind));
}

void PcsModel::admit_call(Context& ctx, PcsState& s, PcsPhone& phone) {
  const double now = ctx.now();
  take_channel(s, phone);
  phone.call_end = now + ctx.rng().exponential(call_duration_);
  phone.next_call = next_call_time(ctx, ctx.self(), now);
  std::uint64_t draws = 0;
  while (phone.next_call < phone.call_end) {
    if (++draws > kMaxLoopDraws) throw_stalled("busy lines", phone, phone.next_call);
    count(s, &PcsCounters::busy_lines);
    count(s, &PcsCounters::call_attempts);
    phone.next_call = next_call_time(ctx, ctx.self(), phone.next_call);
  }
  schedule_in_call(ctx, phone);
}

void PcsModel::admit_handoff(Context& ctx, PcsState& s, PcsPhone& phone) {
  take_channel(s, phone);
  if (phone.call_end < ctx.now()) phone.call_end = ctx.now();  // ended in transit (header)
  schedule_in_call(ctx, phone);
}

void PcsModel::ask(Context& ctx, PcsState& s, const PcsPhone& phone, EventKind kind) {
  const EventKind arrival = kind == kAdmitCall ? kNextCall : kHandoffIn;
  if (s.guard != 0) {
    ctx.schedule(ctx.self(), ctx.now(), arrival, phone);  // after the waiting answer
    return;
  }
  s.guard = kind == kAdmitCall ? kAskedCall : kAskedHandoff;
  ctx.request_decision();
  ctx.schedule(ctx.self(), ctx.now(), kind, phone);
}

void PcsModel::on_admission(Context& ctx, PcsState& s, PcsPhone& phone, EventKind kind) {
  if ((s.guard & kAnswered) == 0) {
    throw std::logic_error("pcs_admission: phone " + std::to_string(phone.id) +
                           " came back before its cell's answer");
  }
  const bool admit = (s.guard & kAdmit) != 0 && free_channels(s) > 0;
  s.guard = 0;
  if (kind == kAdmitCall) {
    arrive_call(ctx, s, phone, admit);
  } else {
    arrive_handoff(ctx, s, phone, admit);
  }
}

void PcsModel::arrive_call(Context& ctx, PcsState& s, PcsPhone& phone, bool admit) {
  count(s, &PcsCounters::call_attempts);
  if (!admit) {
    count(s, &PcsCounters::blocks);
    phone.next_call = next_call_time(ctx, ctx.self(), ctx.now());
    schedule_idle(ctx, phone);
    return;
  }
  admit_call(ctx, s, phone);
}

void PcsModel::arrive_handoff(Context& ctx, PcsState& s, PcsPhone& phone, bool admit) {
  count(s, &PcsCounters::handoffs_in);
  phone.next_move = next_move_time(ctx, ctx.now());
  if (!admit) {
    count(s, &PcsCounters::dropped_handoffs);
    phone.call_end = kInf;
    schedule_idle(ctx, phone);
    return;
  }
  admit_handoff(ctx, s, phone);
}

float PcsModel::busy_fraction(std::uint32_t busy) const {
  return static_cast<float>(static_cast<double>(busy) / static_cast<double>(channels_));
}

float PcsModel::scaled_count(std::uint64_t count) const {
  const double scaled = static_cast<double>(count) * count_scale_;
  return static_cast<float>(count_cap_ > 0.0 ? std::min(scaled, count_cap_) : scaled);
}

void PcsModel::observe(EntityId agent, float* obs) const {
  const PcsState& s = state_of(agent);
  const auto scaled = [this](std::uint64_t count) { return scaled_count(count); };
  obs[0] = busy_fraction(make_public(s).busy);
  // pcs_admission: whether the arrival asked about is a handoff.
  obs[1] = admission_ ? ((s.guard & 3u) == kAskedHandoff ? 1.0f : 0.0f)
                      : static_cast<float>(static_cast<double>(s.guard) /
                                           static_cast<double>(channels_));
  obs[2] = scaled(s.step.call_attempts);
  obs[3] = scaled(s.step.blocks);
  obs[4] = scaled(s.step.handoffs_in);
  obs[5] = scaled(s.step.dropped_handoffs);
  for (std::uint64_t d = 0; d < 4; ++d) {
    obs[6 + d] = busy_fraction(snapshot(neighbour(agent, d)).busy);
  }
  if (time_features_) write_time_of_day(s, obs + kObsDim);
}

void PcsModel::write_time_of_day(const PcsState& s, float* out) const {
  // The time at this boundary: the start of the step the next action acts in.
  const double angle = kTwoPi * traffic_.day_fraction(s.clock * spec_.dt);
  out[0] = static_cast<float>(std::sin(angle));
  out[1] = static_cast<float>(std::cos(angle));
}

double PcsModel::reward(EntityId agent) const {
  const PcsState& s = state_of(agent);
  return 0.0 - (static_cast<double>(s.step.blocks) +
                handoff_weight_ * static_cast<double>(s.step.dropped_handoffs));
}

namespace {

void write_counters(const PcsCounters& c, std::int64_t* out) {
  out[0] = static_cast<std::int64_t>(c.call_attempts);
  out[1] = static_cast<std::int64_t>(c.blocks);
  out[2] = static_cast<std::int64_t>(c.busy_lines);
  out[3] = static_cast<std::int64_t>(c.handoffs_in);
  out[4] = static_cast<std::int64_t>(c.dropped_handoffs);
  out[5] = static_cast<std::int64_t>(c.events);
}

}  // namespace

void PcsModel::info(EntityId agent, std::int64_t* out) const {
  write_counters(state_of(agent).step, out);
}

void PcsModel::totals(std::int64_t* out) const {
  std::int64_t cell[6];
  std::fill(out, out + 6, 0);
  for (EntityId e = 0; e < spec_.num_entities; ++e) {
    write_counters(state_of(e).total, cell);
    for (int k = 0; k < 6; ++k) out[k] += cell[k];
  }
}

void PcsModel::state(float* out) const {
  for (EntityId e = 0; e < spec_.num_entities; ++e) {
    const PcsState& s = state_of(e);
    out[2 * e] = busy_fraction(make_public(s).busy);
    out[2 * e + 1] = admission_ ? 0.0f
                                : static_cast<float>(static_cast<double>(s.guard) /
                                                     static_cast<double>(channels_));
  }
  // Every cell's clock counts the same steps: cell 0's is the grid's.
  if (time_features_) write_time_of_day(state_of(0), out + 2 * spec_.num_entities);
}

std::unique_ptr<Model> make_pcs(Config& config) { return std::make_unique<PcsModel>(config); }

std::unique_ptr<Model> make_pcs_v1(Config& config) {
  return std::make_unique<PcsModel>(config, PcsVersion::kV1);
}

std::unique_ptr<Model> make_pcs_admission(Config& config) {
  return std::make_unique<PcsModel>(config, PcsVersion::kAdmission);
}

}  // namespace seer
