#include "traffic/traffic_grid.hpp"

#include <limits>
#include <string>

namespace seer {

TrafficGridModel::TrafficGridModel(Config& config) {
  static const WorkloadDecl decl = traffic_grid_workload();
  Params params(decl, config);
  spec_.name = decl.name;
  width_ = static_cast<std::uint32_t>(params.integer("width"));
  height_ = static_cast<std::uint32_t>(params.integer("height"));
  cars_ = static_cast<std::uint32_t>(params.integer("cars_per_approach"));
  serve_interval_ = params.real("serve_interval");
  spec_.lookahead = params.real("travel_time");
  spec_.dt = params.real("step_time");
  spec_.num_entities = spec_.num_agents = width_ * height_;
  spec_.agent_prefix = "intersection";
  constexpr float kInf = std::numeric_limits<float>::infinity();
  spec_.obs_dim = 9;
  spec_.obs_low.assign(9, 0.0f);
  spec_.obs_high.assign(9, kInf);
  spec_.obs_high[4] = 1.0f;  // the phase
  spec_.action = ActionSpec{/*discrete=*/true, /*n=*/2, 0, 0.0f, 0.0f};
  spec_.state_dim = spec_.num_entities;
  spec_.state_low = 0.0f;
  spec_.state_high = kInf;
  spec_.info_keys = decl.info_keys;
  spec_.total_keys = decl.total_keys;
  spec_.event_kinds = decl.event_kinds;
  // Pending per intersection: its four SERVEs and the cars on their way to it.
  const std::uint64_t cars = 4ull * cars_ * spec_.num_entities;
  spec_.memory = MemoryEstimate{spec_.num_entities,
                                sizeof(TrafficState) + sizeof(TrafficPublic) +
                                    kRuntimeBytesPerEntity,
                                4ull * spec_.num_entities + cars};
  require_memory(spec_, "width=" + std::to_string(width_) + ", height=" + std::to_string(height_));
  allocate(spec_.num_entities);
}

EntityId TrafficGridModel::neighbour(EntityId cell, std::uint32_t side) const {
  std::uint32_t x = cell % width_;
  std::uint32_t y = cell / width_;
  switch (side) {
    case 0: y = (y + height_ - 1) % height_; break;
    case 1: x = (x + 1) % width_; break;
    case 2: y = (y + 1) % height_; break;
    default: x = (x + width_ - 1) % width_; break;
  }
  return y * width_ + x;
}

void TrafficGridModel::on_init(Context& ctx) {
  TrafficState& s = self_state(ctx);
  for (std::uint32_t approach = 0; approach < 4; ++approach) {
    s.queue[approach] = cars_;
    ctx.schedule(ctx.self(), serve_interval_, kServe, TrafficPayload{approach, 0});
  }
}

void TrafficGridModel::on_step_begin(Context& ctx) {
  TrafficState& s = self_state(ctx);
  s.served_step = 0;
  s.arrived_step = 0;
}

void TrafficGridModel::on_action(Context& ctx, const ActionView& action) {
  self_state(ctx).phase = static_cast<std::uint32_t>(action.discrete);
}

void TrafficGridModel::on_event(Context& ctx, const Event& event) {
  TrafficState& s = self_state(ctx);
  const std::uint32_t approach = event.as<TrafficPayload>().approach;
  if (event.kind == kServe) {
    serve(ctx, s, approach);
  } else {
    ++s.queue[approach];
    ++s.arrived_step;
    ++s.arrived_total;
  }
}

void TrafficGridModel::serve(Context& ctx, TrafficState& s, std::uint32_t approach) {
  if (approach % 2 == s.phase && s.queue[approach] > 0) {
    --s.queue[approach];
    ++s.served_step;
    ++s.served_total;
    // Straight on leaves by the opposite side; left and right by the others.
    static constexpr std::uint32_t kTurn[3] = {2, 1, 3};
    const std::uint32_t exit = (approach + kTurn[ctx.rng().below(3)]) % 4;
    // It joins the neighbour's approach on the side it comes from.
    ctx.schedule(neighbour(ctx.self(), exit), ctx.now() + spec_.lookahead, kArrive,
                 TrafficPayload{(exit + 2) % 4, 0});
  }
  ctx.schedule(ctx.self(), ctx.now() + serve_interval_, kServe, TrafficPayload{approach, 0});
}

void TrafficGridModel::observe(EntityId agent, float* obs) const {
  const TrafficState& s = state_of(agent);
  for (std::uint32_t i = 0; i < 4; ++i) obs[i] = static_cast<float>(s.queue[i]);
  obs[4] = static_cast<float>(s.phase);
  for (std::uint32_t side = 0; side < 4; ++side) {
    obs[5 + side] = static_cast<float>(snapshot(neighbour(agent, side)).queued);
  }
}

double TrafficGridModel::reward(EntityId agent) const {
  return -static_cast<double>(make_public(state_of(agent)).queued);
}

void TrafficGridModel::info(EntityId agent, std::int64_t* out) const {
  const TrafficState& s = state_of(agent);
  out[0] = static_cast<std::int64_t>(s.served_step);
  out[1] = static_cast<std::int64_t>(s.arrived_step);
}

void TrafficGridModel::state(float* out) const {
  for (EntityId e = 0; e < spec_.num_entities; ++e) {
    out[e] = static_cast<float>(make_public(state_of(e)).queued);
  }
}

void TrafficGridModel::totals(std::int64_t* out) const {
  out[0] = out[1] = 0;
  for (EntityId e = 0; e < spec_.num_entities; ++e) {
    out[0] += static_cast<std::int64_t>(state_of(e).served_total);
    out[1] += static_cast<std::int64_t>(state_of(e).arrived_total);
  }
}

std::unique_ptr<Model> make_traffic_grid(Config& config) {
  return std::make_unique<TrafficGridModel>(config);
}

}  // namespace seer
