// A deliberately misbehaving model, for tests of the runtime's fault paths.
//
// `num_entities` entities pass tokens round a ring (entity e -> e+1 after
// `lookahead`, plus a self-event every dt/4). From time `fail_after` on, the
// handler of entity `culprit` misbehaves as `mode` says:
//   0 never; 1 schedules for another entity before now + lookahead;
//   2 schedules for itself before now; 3 targets an entity that does not
//   exist; 4 schedules at NaN; 5 throws std::runtime_error; 6 writes the next
//   entity's state (caught only with check=True); 7 starts an unbounded
//   cascade of same-time self-events (caught by the event budget).
// With `num_agents` > 0 the first entities are agents, for env-level tests.
#pragma once

#include <cstdint>
#include <memory>

#include "seer/config.hpp"
#include "seer/model.hpp"
#include "seer/workload.hpp"

namespace seer {

struct FaultyState {
  std::uint64_t handled;
  std::uint64_t tokens_seen;
};

struct FaultyPublic {
  std::uint64_t handled;
};

class FaultyModel final : public ModelBase<FaultyModel, FaultyState, FaultyPublic> {
 public:
  static constexpr EventKind kToken = 0;
  static constexpr EventKind kTick = 1;

  explicit FaultyModel(Config& config);
  static FaultyPublic make_public(const FaultyState& s) { return FaultyPublic{s.handled}; }

  void reset_states() override { allocate(spec_.num_entities); }
  void on_init(Context& ctx) override;
  void on_action(Context& ctx, const ActionView& action) override { (void)ctx, (void)action; }
  void on_event(Context& ctx, const Event& event) override;
  void observe(EntityId agent, float* obs) const override {
    obs[0] = static_cast<float>(state_of(agent).handled);
  }
  double reward(EntityId agent) const override { (void)agent; return 0.0; }

 private:
  void misbehave(Context& ctx);

  int mode_;
  EntityId culprit_;
  double fail_after_;
};

std::unique_ptr<Model> make_faulty(Config& config);

// The declaration (faulty/workload.cpp).
WorkloadDecl faulty_workload();

}  // namespace seer
