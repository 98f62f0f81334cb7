#include "predprey.hpp"

namespace predprey {

PredPreyModel::PredPreyModel(seer::Config& config) {
  static const seer::WorkloadDecl decl = predprey_workload();
  seer::Params params(decl, config);
  width_ = static_cast<std::int32_t>(params.integer("width"));
  height_ = static_cast<std::int32_t>(params.integer("height"));
  predators_ = static_cast<std::uint32_t>(params.integer("predators"));
  prey_ = static_cast<std::uint32_t>(params.integer("prey"));
  radius_ = static_cast<std::int32_t>(params.integer("view_radius"));
  move_mean_ = params.real("prey_move_mean");
  respawn_time_ = params.real("respawn_time");
  step_cost_ = params.real("step_cost");
  spec_.lookahead = params.real("lookahead");
  spec_.dt = 1.0;
  spec_.name = "predprey";
  spec_.num_entities = predators_ + prey_;
  spec_.num_agents = predators_;
  spec_.agent_prefix = "predator";
  const std::size_t window = static_cast<std::size_t>(2 * radius_ + 1) * (2 * radius_ + 1);
  spec_.obs_dim = 2 + window;
  spec_.obs_low.assign(spec_.obs_dim, 0.0f);
  spec_.obs_high.assign(spec_.obs_dim, static_cast<float>(prey_));
  spec_.obs_high[0] = spec_.obs_high[1] = 1.0f;
  spec_.action = seer::ActionSpec{true, 5, 0, 0.0f, 0.0f};  // stay, up, down, left, right
  spec_.state_dim = static_cast<std::size_t>(width_) * height_;
  spec_.state_low = 0.0f;
  spec_.state_high = static_cast<float>(prey_);
  spec_.info_keys = decl.info_keys;
  spec_.total_keys = decl.total_keys;
  spec_.event_kinds = decl.event_kinds;
  prey_count_.assign(spec_.state_dim, 0);
  allocate(spec_.num_entities);
}

void PredPreyModel::place(Context& ctx, State& s) {
  s.x = static_cast<std::int32_t>(ctx.rng().below(static_cast<std::uint64_t>(width_)));
  s.y = static_cast<std::int32_t>(ctx.rng().below(static_cast<std::uint64_t>(height_)));
  s.alive = 1;
}

void PredPreyModel::on_init(Context& ctx) {
  State& s = self_state(ctx);
  place(ctx, s);
  if (!is_predator(ctx.self())) {
    ctx.schedule(ctx.self(), ctx.now() + ctx.rng().exponential(move_mean_), kMove);
  }
}

void PredPreyModel::on_step_begin(Context& ctx) {
  if (is_predator(ctx.self())) self_state(ctx).caught_step = 0;
}

void PredPreyModel::on_action(Context& ctx, const seer::ActionView& action) {
  static constexpr std::int32_t kDx[5] = {0, 0, 0, -1, 1};
  static constexpr std::int32_t kDy[5] = {0, -1, 1, 0, 0};
  State& s = self_state(ctx);
  s.x = wrap_x(s.x + kDx[action.discrete]);
  s.y = wrap_y(s.y + kDy[action.discrete]);
  // Pounce on every prey the snapshot shows here; the prey decides.
  for (EntityId p = predators_; p < predators_ + prey_; ++p) {
    const Public& seen = snapshot(p);
    if (seen.alive != 0 && seen.x == s.x && seen.y == s.y) {
      ++s.attempts;
      ctx.schedule(p, ctx.now() + spec_.lookahead, kCatch, Cell{s.x, s.y});
    }
  }
}

void PredPreyModel::on_event(Context& ctx, const seer::Event& event) {
  State& s = self_state(ctx);
  switch (event.kind) {
    case kMove: {
      if (s.alive == 0) return;  // caught since: RESPAWN restarts the walk
      static constexpr std::int32_t kDx[4] = {0, 0, -1, 1};
      static constexpr std::int32_t kDy[4] = {-1, 1, 0, 0};
      const auto dir = ctx.rng().below(4);
      s.x = wrap_x(s.x + kDx[dir]);
      s.y = wrap_y(s.y + kDy[dir]);
      ctx.schedule(ctx.self(), ctx.now() + ctx.rng().exponential(move_mean_), kMove);
      return;
    }
    case kCatch: {
      const Cell& cell = event.as<Cell>();
      if (s.alive == 0 || s.x != cell.x || s.y != cell.y) return;  // escaped
      s.alive = 0;
      ++s.catches;
      ctx.schedule(event.source, ctx.now() + spec_.lookahead, kCaught);
      ctx.schedule(ctx.self(), ctx.now() + respawn_time_, kRespawn);
      return;
    }
    case kCaught:
      ++s.catches;
      ++s.caught_step;
      return;
    case kRespawn:
      place(ctx, s);
      ctx.schedule(ctx.self(), ctx.now() + ctx.rng().exponential(move_mean_), kMove);
      return;
    default:
      return;
  }
}

void PredPreyModel::after_snapshot() {
  std::fill(prey_count_.begin(), prey_count_.end(), 0);
  for (EntityId p = predators_; p < predators_ + prey_; ++p) {
    const Public& seen = snapshot(p);
    if (seen.alive != 0) ++prey_count_[static_cast<std::size_t>(seen.y) * width_ + seen.x];
  }
}

void PredPreyModel::observe(EntityId agent, float* obs) const {
  const State& s = state_of(agent);
  obs[0] = static_cast<float>(s.x) / static_cast<float>(width_);
  obs[1] = static_cast<float>(s.y) / static_cast<float>(height_);
  std::size_t i = 2;
  for (std::int32_t dy = -radius_; dy <= radius_; ++dy) {
    for (std::int32_t dx = -radius_; dx <= radius_; ++dx) {
      const auto cell = static_cast<std::size_t>(wrap_y(s.y + dy)) * width_ + wrap_x(s.x + dx);
      obs[i++] = static_cast<float>(prey_count_[cell]);
    }
  }
}

double PredPreyModel::reward(EntityId agent) const {
  return static_cast<double>(state_of(agent).caught_step) - step_cost_;
}

void PredPreyModel::info(EntityId agent, std::int64_t* out) const {
  out[0] = static_cast<std::int64_t>(state_of(agent).catches);
  out[1] = static_cast<std::int64_t>(state_of(agent).attempts);
}

void PredPreyModel::state(float* out) const {
  for (std::size_t c = 0; c < prey_count_.size(); ++c) out[c] = static_cast<float>(prey_count_[c]);
}

void PredPreyModel::totals(std::int64_t* out) const {
  std::int64_t caught = 0;
  for (EntityId p = predators_; p < predators_ + prey_; ++p) {
    caught += static_cast<std::int64_t>(state_of(p).catches);
  }
  out[0] = caught;
}

std::unique_ptr<seer::Model> make_predprey(seer::Config& config) {
  return std::make_unique<PredPreyModel>(config);
}

}  // namespace predprey
