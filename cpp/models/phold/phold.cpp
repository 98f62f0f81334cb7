#include "phold/phold.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace seer {

PholdModel::PholdModel(Config& config) {
  static const WorkloadDecl decl = phold_workload();
  Params params(decl, config);
  spec_.name = "phold";
  spec_.num_entities = static_cast<std::uint32_t>(params.integer("num_entities"));
  population_ = static_cast<std::uint32_t>(params.integer("population"));
  remote_ = params.real("remote");
  mean_ = params.real("mean");
  spec_.lookahead = params.real("lookahead");
  spec_.dt = params.real("dt");
  work_ = static_cast<std::uint64_t>(params.integer("work"));
  const double hot_fraction = params.real("hot_fraction");
  hot_entities_ =
      static_cast<std::uint32_t>(std::ceil(hot_fraction * static_cast<double>(spec_.num_entities)));
  hot_work_ = static_cast<std::uint64_t>(params.integer("hot_work"));
  if (static_cast<double>(spec_.num_entities) * population_ > 1e8) {
    throw std::invalid_argument("num_entities * population must be <= 1e8 (pending events), got " +
                                std::to_string(static_cast<double>(spec_.num_entities) *
                                               population_));
  }
  spec_.num_agents = 0;
  spec_.agent_prefix = "entity";
  spec_.event_kinds = decl.event_kinds;
  spec_.memory = MemoryEstimate{spec_.num_entities,
                                sizeof(PholdState) + sizeof(PholdPublic) + kRuntimeBytesPerEntity,
                                static_cast<std::uint64_t>(spec_.num_entities) * population_};
  require_memory(spec_, "num_entities=" + std::to_string(spec_.num_entities) +
                            ", population=" + std::to_string(population_));
  allocate(spec_.num_entities);
}

std::uint64_t PholdModel::burn(std::uint64_t acc, std::uint64_t work) {
  for (std::uint64_t i = 0; i < work; ++i) acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
  return acc;
}

void PholdModel::on_init(Context& ctx) {
  for (std::uint32_t i = 0; i < population_; ++i) {
    const double delay = spec_.lookahead + ctx.rng().exponential(mean_);
    ctx.schedule(ctx.self(), ctx.now() + delay, kToken, PholdToken{ctx.self(), 0});
  }
}

void PholdModel::on_event(Context& ctx, const Event& event) {
  PholdState& s = self_state(ctx);
  ++s.processed;
  const std::uint64_t work = ctx.self() < hot_entities_ ? work_ + hot_work_ : work_;
  s.work_acc = burn(s.work_acc ^ event.seq, work);
  const PholdToken& token = event.as<PholdToken>();
  EntityId target = ctx.self();
  const std::uint32_t n = spec_.num_entities;
  if (n > 1 && ctx.rng().uniform() < remote_) {
    // Uniform over the n-1 other entities.
    const auto pick = static_cast<EntityId>(ctx.rng().below(n - 1));
    target = pick >= ctx.self() ? pick + 1 : pick;
  }
  const double delay = spec_.lookahead + ctx.rng().exponential(mean_);
  ctx.schedule(target, ctx.now() + delay, kToken, PholdToken{token.origin, token.hops + 1});
}

std::unique_ptr<Model> make_phold(Config& config) { return std::make_unique<PholdModel>(config); }

}  // namespace seer
