#include "faulty/faulty.hpp"

#include <limits>
#include <string>
#include <stdexcept>

namespace seer {

FaultyModel::FaultyModel(Config& config) {
  static const WorkloadDecl decl = faulty_workload();
  Params params(decl, config);
  spec_.name = "faulty";
  spec_.num_entities = static_cast<std::uint32_t>(params.integer("num_entities"));
  spec_.lookahead = params.real("lookahead");
  spec_.dt = params.real("dt");
  mode_ = static_cast<int>(params.integer("mode"));
  culprit_ = static_cast<EntityId>(params.integer_at_most("culprit", spec_.num_entities - 1));
  fail_after_ = params.real("fail_after");
  // Entities 0 .. num_agents-1 are agents (Discrete(2) actions, ignored;
  // one observation: events handled), so envs can wrap the model too.
  spec_.num_agents = static_cast<std::uint32_t>(
      params.integer_at_most("num_agents", static_cast<std::int64_t>(spec_.num_entities)));
  spec_.agent_prefix = "entity";
  spec_.obs_dim = 1;
  spec_.obs_low = {0.0f};
  spec_.obs_high = {std::numeric_limits<float>::infinity()};
  spec_.action = ActionSpec{/*discrete=*/true, /*n=*/2, 0, 0.0f, 0.0f};
  spec_.event_kinds = decl.event_kinds;
  spec_.memory = MemoryEstimate{spec_.num_entities,
                                sizeof(FaultyState) + sizeof(FaultyPublic) + kRuntimeBytesPerEntity,
                                2ull * spec_.num_entities};
  require_memory(spec_, "num_entities=" + std::to_string(spec_.num_entities));
  allocate(spec_.num_entities);
}

void FaultyModel::on_init(Context& ctx) {
  ctx.schedule(ctx.self(), 0.0, kTick);
  ctx.schedule((ctx.self() + 1) % spec_.num_entities, spec_.lookahead, kToken);
}

void FaultyModel::on_event(Context& ctx, const Event& event) {
  FaultyState& s = self_state(ctx);
  ++s.handled;
  if (ctx.self() == culprit_ && ctx.now() >= fail_after_ && mode_ != 0) misbehave(ctx);
  if (event.kind == kToken) {
    ++s.tokens_seen;
    ctx.schedule((ctx.self() + 1) % spec_.num_entities, ctx.now() + spec_.lookahead, kToken);
  } else {
    ctx.schedule(ctx.self(), ctx.now() + spec_.dt / 4, kTick);
  }
}

void FaultyModel::misbehave(Context& ctx) {
  const EntityId other = (ctx.self() + 1) % spec_.num_entities;
  switch (mode_) {
    case 1:
      ctx.schedule(other, ctx.now() + spec_.lookahead / 2, kToken);
      break;
    case 2:
      ctx.schedule(ctx.self(), ctx.now() - 1.0, kTick);
      break;
    case 3:
      ctx.schedule(spec_.num_entities + 5, ctx.now() + spec_.lookahead, kToken);
      break;
    case 4:
      ctx.schedule(ctx.self(), std::numeric_limits<double>::quiet_NaN(), kTick);
      break;
    case 5:
      throw std::runtime_error("deliberate failure in the faulty model");
    case 6:
      states_[other].handled += 1000;  // the contract breach under test
      break;
    case 7:
      ctx.schedule(ctx.self(), ctx.now(), kTick);
      ctx.schedule(ctx.self(), ctx.now(), kTick);
      break;
    default:
      break;
  }
}

std::unique_ptr<Model> make_faulty(Config& config) { return std::make_unique<FaultyModel>(config); }

}  // namespace seer
