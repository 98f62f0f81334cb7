// Predator-prey on a torus: the C++ port of predprey/prototype.py.
//
// Entities 0 .. predators-1 are the agents (predators); the rest are prey.
// A predator moves one cell per step (its action) and, seeing live prey on
// its new cell in the boundary snapshot, sends each a CATCH event at
// now + lookahead. Prey random-walk in continuous time (MOVE self-events);
// a prey still on that cell when CATCH arrives is caught: it replies CAUGHT
// to the predator (reward) and respawns elsewhere after `respawn_time`.
// Every cross-entity effect is an event at >= now + lookahead, every write
// is to the handler's own state, so any executor gives the serial bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "seer/config.hpp"
#include "seer/model.hpp"
#include "seer/workload.hpp"

namespace predprey {

using seer::Context;
using seer::EntityId;
using seer::EventKind;

// Same layout as PredPreyPrototype.state_dtype (no padding: hashed and saved).
struct State {
  std::int32_t x, y;
  std::uint32_t alive;        // prey: 1 live, 0 caught; predators: 1
  std::uint32_t caught_step;  // predators: catches confirmed this step
  std::uint64_t catches;      // predators: catches; prey: times caught
  std::uint64_t attempts;     // predators: CATCH events sent
};
static_assert(sizeof(State) == 32, "State must have no padding");

struct Public {  // the snapshot: where everyone is, and who is alive
  std::int32_t x, y;
  std::uint32_t alive;
};
static_assert(sizeof(Public) == 12, "Public must have no padding");

struct Cell {  // CATCH payload: the cell the predator pounced on
  std::int32_t x, y;
};

class PredPreyModel final : public seer::ModelBase<PredPreyModel, State, Public> {
 public:
  static constexpr EventKind kMove = 0, kCatch = 1, kCaught = 2, kRespawn = 3;

  explicit PredPreyModel(seer::Config& config);
  static Public make_public(const State& s) { return Public{s.x, s.y, s.alive}; }

  void reset_states() override { allocate(spec_.num_entities); }
  void on_init(Context& ctx) override;
  void on_step_begin(Context& ctx) override;
  void on_action(Context& ctx, const seer::ActionView& action) override;
  void on_event(Context& ctx, const seer::Event& event) override;
  void after_snapshot() override;
  void observe(EntityId agent, float* obs) const override;
  double reward(EntityId agent) const override;
  void info(EntityId agent, std::int64_t* out) const override;
  void state(float* out) const override;
  void totals(std::int64_t* out) const override;

 private:
  bool is_predator(EntityId e) const { return e < predators_; }
  void place(Context& ctx, State& s);  // random cell
  std::int32_t wrap_x(std::int32_t x) const { return (x % width_ + width_) % width_; }
  std::int32_t wrap_y(std::int32_t y) const { return (y % height_ + height_) % height_; }

  std::int32_t width_, height_, radius_;
  std::uint32_t predators_, prey_;
  double move_mean_, respawn_time_, step_cost_;
  std::vector<std::int32_t> prey_count_;  // live prey per cell, from the snapshot
};

std::unique_ptr<seer::Model> make_predprey(seer::Config& config);
// The declaration (workload.cpp).
seer::WorkloadDecl predprey_workload();

}  // namespace predprey
