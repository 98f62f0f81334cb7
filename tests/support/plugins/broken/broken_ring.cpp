// A ring of agents passing tokens, with one bug per `mode`:
//   0 none; 1 schedules for the next entity before now + lookahead;
//   2 writes the next entity's state (caught only with check=True);
//   3 reads the next entity's live state instead of the snapshot (no check
//     sees it: executors then disagree with serial);
//   4 draws from a process-wide counter instead of its own stream
//     (non-deterministic across runs); 5 throws from a handler.
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "seer/model.hpp"
#include "seer/python_plugin.hpp"
#include "seer/workload.hpp"

namespace {

struct State {
  std::uint64_t count;
  std::uint64_t seen;
};
struct Public {
  std::uint64_t count;
};

std::uint64_t g_calls = 0;  // mode 4's shared state: the bug

seer::WorkloadDecl broken_ring_workload() {
  seer::WorkloadDecl w;
  w.name = "broken_ring";
  w.summary = "A token ring with one deliberate bug per mode.";
  w.params = {seer::int_param("num_entities", 6, 2, 1024, "agents in the ring"),
              seer::int_param("mode", 0, 0, 5, "which bug (0: none)")};
  w.event_kinds = {"TOKEN", "TICK"};
  w.records.push_back(seer::checked_record(
      "state", sizeof(State), {SEER_FIELD(State, count), SEER_FIELD(State, seen)}, w.records));
  w.records.push_back(seer::checked_record("public", sizeof(Public),
                                           {SEER_FIELD(Public, count)}, w.records));
  return w;
}

class BrokenRing final : public seer::ModelBase<BrokenRing, State, Public> {
 public:
  explicit BrokenRing(seer::Config& config) {
    static const seer::WorkloadDecl decl = broken_ring_workload();
    seer::Params params(decl, config);
    spec_.name = "broken_ring";
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
  static Public make_public(const State& s) { return Public{s.count}; }

  void reset_states() override { allocate(spec_.num_entities); }
  void on_init(seer::Context& ctx) override { ctx.schedule(ctx.self(), 0.1, 1); }
  void on_action(seer::Context& ctx, const seer::ActionView& action) override {
    if (action.discrete == 0) return;
    const double delay = mode_ == 1 ? spec_.lookahead / 2 : spec_.lookahead;
    ctx.schedule(next(ctx), ctx.now() + delay, 0);
  }
  void on_event(seer::Context& ctx, const seer::Event& event) override {
    State& s = self_state(ctx);
    if (event.kind == 1) {  // TICK: a self-event every 0.3
      s.count += mode_ == 4 ? ++g_calls : ctx.rng().below(3);
      if (mode_ == 3) s.seen += states_[next(ctx)].count;  // the read bug
      if (mode_ == 2) states_[next(ctx)].count += 1;       // the write bug
      if (mode_ == 5 && ctx.now() > 2.0) throw std::runtime_error("deliberate bug");
      ctx.schedule(ctx.self(), ctx.now() + 0.3, 1);
    } else {
      s.count += 10;
    }
  }
  void observe(seer::EntityId a, float* obs) const override {
    obs[0] = static_cast<float>(state_of(a).count % 1000000);
    obs[1] = static_cast<float>(state_of(a).seen % 1000000);
  }
  double reward(seer::EntityId a) const override {
    return static_cast<double>(snapshot((a + 1) % spec_.num_entities).count);
  }

 private:
  seer::EntityId next(const seer::Context& ctx) const {
    return (ctx.self() + 1) % spec_.num_entities;
  }
  int mode_;
};

std::unique_ptr<seer::Model> make_broken_ring(seer::Config& config) {
  return std::make_unique<BrokenRing>(config);
}

}  // namespace

SEER_MODEL_MODULE(_broken_ring, make_broken_ring, broken_ring_workload)
