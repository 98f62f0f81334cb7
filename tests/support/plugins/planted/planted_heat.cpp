// The C++ port of tests/models/test_verify.py's HeatRing prototype, with one planted
// porting bug per `mode` (each one verify() must catch and locate):
//   0 none (a faithful port);
//   1 reordered floating-point arithmetic: the heat differs in its last bits
//     from step 1, the float32 observations stay equal;
//   2 writes the next entity's state (seen only with check=True);
//   3 reads the next entity's live state instead of its snapshot;
//   4 reset_states() forgets to allocate: a reused env keeps the last episode;
//   5 schedules a cross-entity event before now + lookahead.
#include <cstdint>
#include <memory>

#include "seer/model.hpp"
#include "seer/python_plugin.hpp"
#include "seer/workload.hpp"

namespace {

struct State {
  double heat;
  std::uint64_t tokens;
};
struct Public {
  double heat;
};

constexpr std::uint32_t kToken = 0;
constexpr std::uint32_t kTick = 1;

seer::WorkloadDecl planted_heat_workload() {
  seer::WorkloadDecl w;
  w.name = "planted_heat";
  w.summary = "A heat ring with one planted porting bug per mode.";
  w.params = {seer::int_param("num_entities", 6, 2, 1 << 20, "agents in the ring"),
              seer::int_param("mode", 0, 0, 5, "which bug (0: none)")};
  w.event_kinds = {"TOKEN", "TICK"};
  w.records.push_back(seer::checked_record(
      "state", sizeof(State), {SEER_FIELD(State, heat), SEER_FIELD(State, tokens)}, w.records));
  w.records.push_back(
      seer::checked_record("public", sizeof(Public), {SEER_FIELD(Public, heat)}, w.records));
  return w;
}

class PlantedHeat final : public seer::ModelBase<PlantedHeat, State, Public> {
 public:
  explicit PlantedHeat(seer::Config& config) {
    static const seer::WorkloadDecl decl = planted_heat_workload();
    seer::Params params(decl, config);
    spec_.name = "planted_heat";
    spec_.num_entities = spec_.num_agents =
        static_cast<std::uint32_t>(params.integer("num_entities"));
    mode_ = static_cast<int>(params.integer("mode"));
    spec_.lookahead = 0.5;
    spec_.dt = 1.0;
    spec_.obs_dim = 2;
    spec_.obs_low.assign(2, 0.0f);
    spec_.obs_high.assign(2, 1e9f);
    spec_.action = seer::ActionSpec{true, 2, 0, 0.0f, 0.0f};
    spec_.event_kinds = decl.event_kinds;
    allocate(spec_.num_entities);
  }
  static Public make_public(const State& s) { return Public{s.heat}; }

  void reset_states() override {
    if (mode_ != 4) allocate(spec_.num_entities);
  }
  void on_init(seer::Context& ctx) override { ctx.schedule(ctx.self(), 0.1, kTick); }
  void on_action(seer::Context& ctx, const seer::ActionView& action) override {
    if (action.discrete == 0) return;
    const double delay = mode_ == 5 ? spec_.lookahead / 2 : spec_.lookahead;
    ctx.schedule(next(ctx), ctx.now() + delay, kToken);
  }
  void on_event(seer::Context& ctx, const seer::Event& event) override {
    State& s = self_state(ctx);
    if (event.kind == kTick) {
      const double u = ctx.rng().uniform();
      const double neighbour = mode_ == 3 ? states_[next(ctx)].heat : snapshot(next(ctx)).heat;
      if (mode_ == 1) {
        s.heat = s.heat * 0.5 + (u * 0.3 + 0.1);  // the reordering bug
      } else {
        s.heat = s.heat * 0.5 + u * 0.3 + 0.1;
      }
      s.heat += neighbour * 0.25;
      if (mode_ == 2) states_[next(ctx)].tokens += 1;  // the write bug
      ctx.schedule(ctx.self(), ctx.now() + 0.3, kTick);
    } else {
      s.tokens += 1;
      s.heat += 1.0;
    }
  }
  void observe(seer::EntityId a, float* obs) const override {
    obs[0] = static_cast<float>(state_of(a).heat);
    obs[1] = static_cast<float>(state_of(a).tokens);
  }
  double reward(seer::EntityId a) const override {
    return static_cast<double>(state_of(a).tokens);
  }

 private:
  seer::EntityId next(const seer::Context& ctx) const {
    return (ctx.self() + 1) % spec_.num_entities;
  }
  int mode_;
};

std::unique_ptr<seer::Model> make_planted_heat(seer::Config& config) {
  return std::make_unique<PlantedHeat>(config);
}

}  // namespace

SEER_MODEL_MODULE(_planted_heat, make_planted_heat, planted_heat_workload)
