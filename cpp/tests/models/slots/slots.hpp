// A test model whose agents' valid actions vary (action masks): each agent
// holds `slots` slots, each free or taken. Action 0 waits (always valid);
// action 1 + s takes slot s, valid only while slot s is free
// (Model::action_mask). A taken slot frees itself after an exponential hold
// (a RELEASE self-event); taking one also PINGs the next agent at
// now + lookahead, whose observation shows how many of its neighbour's slots
// are taken (through the snapshot), so cross-entity events and the snapshot
// both matter. on_init takes each slot with probability 1/2: masks vary from
// the reset on.
//
// Two registrations: "slots" (lockstep: every agent acts at every step) and
// "slots_asking" (event-driven decisions: an agent asks at its own ASK
// events). tests/support/slots_models.py holds the PythonModel twins.
#pragma once

#include <cstdint>
#include <memory>

#include "seer/config.hpp"
#include "seer/model.hpp"
#include "seer/workload.hpp"

namespace seer {

struct SlotsState {
  std::uint32_t taken;   // bit s: slot s is taken
  std::uint32_t pings;   // PINGs received
  std::uint64_t claims;  // slots taken by actions
  std::uint64_t asked;   // requests made (slots_asking)
};

struct SlotsPublic {
  std::uint32_t busy;  // slots taken
  std::uint32_t pad;
};

struct SlotsPayload {
  std::uint32_t slot;
  std::uint32_t pad;
};

class SlotsModel final : public ModelBase<SlotsModel, SlotsState, SlotsPublic> {
 public:
  static constexpr EventKind kRelease = 0;
  static constexpr EventKind kPing = 1;
  static constexpr EventKind kAsk = 2;

  SlotsModel(Config& config, bool asking);
  static SlotsPublic make_public(const SlotsState& s);

  void on_init(Context& ctx) override;
  void on_action(Context& ctx, const ActionView& action) override;
  void on_event(Context& ctx, const Event& event) override;
  void observe(EntityId agent, float* obs) const override;
  double reward(EntityId agent) const override;
  void action_mask(EntityId agent, std::uint8_t* out) const override;

 private:
  void take(Context& ctx, SlotsState& s, std::uint32_t slot);

  bool asking_;
  std::uint32_t slots_;
  double hold_;
};

std::unique_ptr<Model> make_slots(Config& config);
std::unique_ptr<Model> make_slots_asking(Config& config);

// The declarations (slots/workload.cpp).
WorkloadDecl slots_workload();
WorkloadDecl slots_asking_workload();

}  // namespace seer
