// PHOLD: the standard synthetic benchmark of PDES engines (ROSS, ROOT-Sim).
//
// `num_entities` entities start with `population` tokens each. Handling a
// token, an entity burns `work` units of deterministic compute, then sends
// the token on after `lookahead + exp(mean)`: with probability `remote` to a
// uniformly chosen *other* entity, otherwise to itself. No agents: PHOLD runs
// through seer_env.Simulation, for tests and benchmarks.
//
// A hot spot (the "imbalanced PHOLD" of PDES papers): the first
// `hot_fraction` of the entities (ids 0 .. ceil(hot_fraction * n) - 1, a
// contiguous block, like a busy district) burn `hot_work` more units per
// token. A static partition of the ids puts the whole block on one thread.
#pragma once

#include <cstdint>
#include <memory>

#include "seer/config.hpp"
#include "seer/model.hpp"
#include "seer/workload.hpp"

namespace seer {

struct PholdState {
  std::uint64_t processed;  // tokens handled
  std::uint64_t work_acc;   // result of the burned compute (kept so it is not optimized away)
};

struct PholdPublic {
  std::uint64_t processed;
};

struct PholdToken {
  std::uint64_t origin;  // entity that created the token
  std::uint64_t hops;    // times it was handled
};

class PholdModel final : public ModelBase<PholdModel, PholdState, PholdPublic> {
 public:
  static constexpr EventKind kToken = 0;

  explicit PholdModel(Config& config);

  static PholdPublic make_public(const PholdState& s) { return PholdPublic{s.processed}; }

  void reset_states() override { allocate(spec_.num_entities); }
  void on_init(Context& ctx) override;
  void on_action(Context& ctx, const ActionView& action) override { (void)ctx, (void)action; }
  void on_event(Context& ctx, const Event& event) override;
  void observe(EntityId agent, float* obs) const override { (void)agent, (void)obs; }
  double reward(EntityId agent) const override { (void)agent; return 0.0; }

  // `work` units of a dependent integer chain; ~1 ns per unit.
  static std::uint64_t burn(std::uint64_t acc, std::uint64_t work);

 private:
  std::uint32_t population_;
  double remote_;
  double mean_;
  std::uint64_t work_;
  std::uint32_t hot_entities_;  // ids below this are hot
  std::uint64_t hot_work_;      // extra units per token at a hot entity
};

std::unique_ptr<Model> make_phold(Config& config);

// The declaration (phold/workload.cpp).
WorkloadDecl phold_workload();

}  // namespace seer
