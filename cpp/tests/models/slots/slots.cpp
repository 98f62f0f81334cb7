#include "slots/slots.hpp"

#include <string>

namespace seer {
namespace {

std::uint32_t count_taken(std::uint32_t taken) {
  std::uint32_t n = 0;
  for (; taken != 0; taken &= taken - 1) ++n;
  return n;
}

}  // namespace

SlotsModel::SlotsModel(Config& config, bool asking) : asking_(asking) {
  static const WorkloadDecl lockstep = slots_workload();
  static const WorkloadDecl decisions = slots_asking_workload();
  const WorkloadDecl& decl = asking ? decisions : lockstep;
  Params params(decl, config);
  spec_.name = decl.name;
  spec_.num_entities = spec_.num_agents = static_cast<std::uint32_t>(params.integer("agents"));
  slots_ = static_cast<std::uint32_t>(params.integer("slots"));
  hold_ = params.real("hold");
  spec_.lookahead = params.real("lookahead");
  spec_.dt = 1.0;
  spec_.obs_dim = slots_ + 2;
  spec_.obs_low.assign(spec_.obs_dim, 0.0f);
  spec_.obs_high.assign(spec_.obs_dim, 1e9f);
  spec_.action = ActionSpec{/*discrete=*/true, /*n=*/slots_ + 1, 0, 0.0f, 0.0f};
  spec_.event_kinds = decl.event_kinds;
  spec_.decisions = decl.decisions;
  spec_.action_mask = decl.action_mask;
  spec_.memory = MemoryEstimate{spec_.num_entities,
                                sizeof(SlotsState) + sizeof(SlotsPublic) + kRuntimeBytesPerEntity,
                                (slots_ + 2ull) * spec_.num_entities};
  require_memory(spec_, "agents=" + std::to_string(spec_.num_entities));
  allocate(spec_.num_entities);
}

SlotsPublic SlotsModel::make_public(const SlotsState& s) {
  return SlotsPublic{count_taken(s.taken), 0};
}

void SlotsModel::take(Context& ctx, SlotsState& s, std::uint32_t slot) {
  s.taken |= 1u << slot;
  ctx.schedule(ctx.self(), ctx.now() + ctx.rng().exponential(hold_), kRelease,
               SlotsPayload{slot, 0});
}

void SlotsModel::on_init(Context& ctx) {
  SlotsState& s = self_state(ctx);
  for (std::uint32_t slot = 0; slot < slots_; ++slot) {
    if (ctx.rng().uniform() < 0.5) take(ctx, s, slot);
  }
  if (asking_) ctx.schedule(ctx.self(), ctx.rng().exponential(0.3), kAsk);
}

void SlotsModel::on_action(Context& ctx, const ActionView& action) {
  SlotsState& s = self_state(ctx);
  if (action.discrete > 0) {
    // The runtime refuses a taken slot (action_mask): taking one twice is a bug.
    take(ctx, s, static_cast<std::uint32_t>(action.discrete - 1));
    ++s.claims;
    const EntityId next = (ctx.self() + 1) % spec_.num_entities;
    ctx.schedule(next, ctx.now() + spec_.lookahead, kPing);
  }
  if (asking_) {
    ctx.schedule(ctx.self(), ctx.now() + 0.1 * static_cast<double>(action.discrete + 1), kAsk);
  }
}

void SlotsModel::on_event(Context& ctx, const Event& event) {
  SlotsState& s = self_state(ctx);
  if (event.kind == kRelease) {
    s.taken &= ~(1u << event.as<SlotsPayload>().slot);
  } else if (event.kind == kPing) {
    ++s.pings;
  } else {
    ++s.asked;
    ctx.request_decision();
  }
}

void SlotsModel::observe(EntityId agent, float* obs) const {
  const SlotsState& s = state_of(agent);
  for (std::uint32_t slot = 0; slot < slots_; ++slot) {
    obs[slot] = static_cast<float>((s.taken >> slot) & 1u);
  }
  obs[slots_] = static_cast<float>(s.pings);
  obs[slots_ + 1] = static_cast<float>(snapshot((agent + 1) % spec_.num_entities).busy);
}

double SlotsModel::reward(EntityId agent) const {
  return static_cast<double>(count_taken(state_of(agent).taken));
}

void SlotsModel::action_mask(EntityId agent, std::uint8_t* out) const {
  const SlotsState& s = state_of(agent);
  out[0] = 1;  // waiting is always valid
  for (std::uint32_t slot = 0; slot < slots_; ++slot) out[1 + slot] = ((s.taken >> slot) & 1u) ^ 1u;
}

std::unique_ptr<Model> make_slots(Config& config) {
  return std::make_unique<SlotsModel>(config, false);
}

std::unique_ptr<Model> make_slots_asking(Config& config) {
  return std::make_unique<SlotsModel>(config, true);
}

}  // namespace seer
