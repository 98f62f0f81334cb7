// PCS: wireless cell management (the pcs_v0 workload, WORKLOADS.md).
//
// The classic PCS model of parallel simulation (ROSS-Models pcs/pcs.c, after
// Carothers et al., "Distributed simulation of large-scale PCS networks") as a
// MARL task. Cells on a `width x height` torus are the agents; each step a cell
// picks how many of its `channels` to hold back as guard channels: a new call
// is admitted only while free channels > guard, a handoff while any is free.
//
// Phones are events. A phone exists only as its one pending event, whose
// payload (PcsPhone) carries its next-call, call-end and next-move times and
// the channel it holds. Every handler consumes one phone event and schedules
// exactly one, so `phones_per_cell * cells` events are always pending.
//
//   NEXT_CALL    a call attempt. Blocked (free <= guard): count a block, draw
//                the next call. Admitted: take a channel, draw the call end,
//                then the next call; every further attempt inside the call is
//                a busy line (and an attempt). Then the first of call end
//                (CALL_END) and next move (HANDOFF_OUT), both to self.
//   CALL_END     free the channel; schedule the idle phone's next activity.
//   HANDOFF_OUT  free the channel; send HANDOFF_IN to a random neighbour at
//                now + handoff_delay.
//   HANDOFF_IN   draw the next move (now + exp); no free channel: a dropped
//                handoff, the call ends; else take a channel, keep the call's
//                end time and continue as after an admitted call.
//   idle phone   while its next move comes before its next call, it walks to
//                a random neighbour (drawing from the handling cell's stream)
//                and draws its next move (+= exp); its NEXT_CALL goes to the
//                cell where it ends up.
// Random draws per phone at init: next call, then next move. Neighbours are
// drawn with below(4): 0 x-1, 1 x+1, 2 y-1, 3 y+1 (torus).
//
// The one deviation from the classic model: the classic model delivers
// cross-cell events (handoffs, idle phones arriving elsewhere) with zero delay;
// here they arrive no earlier than now + handoff_delay (the lookahead L). A
// handoff arrives at exactly now + L. A phone whose NEXT_CALL would reach
// another cell before now + L has its next call moved to now + L (and keeps
// walking while its next move comes before that). Because of the transit
// time, a handed-off call may reach its new cell after its end time or its
// next call; those times are moved to the arrival time (the call ends, or the
// attempt happens, on arrival). With L much smaller than the means (1 vs 180+
// minutes by default) this changes the statistics by well under a percent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "compiler.hpp"
#include "pcs/traffic.hpp"
#include "seer/config.hpp"
#include "seer/model.hpp"
#include "seer/workload.hpp"

namespace seer {

// Event counts of one cell, over this step or since reset.
struct PcsCounters {
  std::uint64_t call_attempts;     // NEXT_CALL events plus busy lines
  std::uint64_t blocks;            // new calls refused
  std::uint64_t busy_lines;        // attempts that fell inside the phone's own call
  std::uint64_t handoffs_in;       // HANDOFF_IN arrivals
  std::uint64_t dropped_handoffs;  // arrivals with no free channel
  std::uint64_t events;            // events handled
};

// One cell: its channels and counters.
struct PcsState {
  std::uint64_t channel_mask;  // bit c set: channel c is in use
  // pcs_v0/v1: guard channels in effect this step. pcs_admission: where the
  // cell's admission request stands (PcsModel::kAsked*, kAnswer*).
  std::uint32_t guard;
  std::uint32_t clock;         // steps begun since reset when time_features is on, else 0
  PcsCounters step;            // cleared at each step start
  PcsCounters total;           // since reset
};
static_assert(sizeof(PcsState) == 112, "PcsState must have no padding");

// What other cells' observations read at the boundary.
struct PcsPublic {
  std::uint32_t busy;  // channels in use
  std::uint32_t pad;   // always 0
};
static_assert(sizeof(PcsPublic) == 8, "PcsPublic must have no padding");

// A phone: the payload of its one pending event.
struct PcsPhone {
  double next_call;      // time of its next call attempt
  double call_end;       // end of its current call; +inf when idle
  double next_move;      // time of its next move to a neighbouring cell
  std::uint32_t id;      // global phone id (cell * phones_per_cell + i), for tracing
  std::uint32_t channel; // channel held in the current cell, or kNoChannel
};
static_assert(sizeof(PcsPhone) == 32, "PcsPhone must have no padding");

// pcs_v0: constant traffic. pcs_v1: traffic.hpp's varying traffic, the time
// of day observed, counts capped (its own declaration, pcs/workload.cpp).
// pcs_admission: pcs_v1's traffic, and a cell decides at each call and
// handoff arrival whether to admit it (event-driven decisions, below).
enum class PcsVersion { kV0, kV1, kAdmission };

class PcsModel final : public ModelBase<PcsModel, PcsState, PcsPublic> {
 public:
  static constexpr EventKind kNextCall = 0;
  static constexpr EventKind kCallEnd = 1;
  static constexpr EventKind kHandoffOut = 2;
  static constexpr EventKind kHandoffIn = 3;
  // pcs_admission: a call (handoff) that arrived with a channel free asks
  // its cell (request_decision) and comes back to it as ADMIT_CALL
  // (ADMIT_HANDOFF), a self-event at the same time that the runtime holds
  // until the answer: the answer waits in PcsState::guard meanwhile.
  static constexpr EventKind kAdmitCall = 4;
  static constexpr EventKind kAdmitHandoff = 5;
  static constexpr std::uint32_t kAskedCall = 1;     // guard: a new call waits
  static constexpr std::uint32_t kAskedHandoff = 2;  // guard: a handoff waits
  static constexpr std::uint32_t kAnswered = 4;      // guard bit: the action arrived
  static constexpr std::uint32_t kAdmit = 8;         // guard bit: ... and it admits
  static constexpr std::uint32_t kNoChannel = 0xFFFFFFFFu;
  static constexpr std::uint32_t kMaxChannels = 64;  // one bit per channel in channel_mask

  explicit PcsModel(Config& config, PcsVersion version = PcsVersion::kV0);

  static PcsPublic make_public(const PcsState& s) {
    return PcsPublic{static_cast<std::uint32_t>(set_bit_count(s.channel_mask)), 0};
  }

  void reset_states() override { allocate(spec_.num_entities); }
  void on_init(Context& ctx) override;
  void on_step_begin(Context& ctx) override;
  void on_action(Context& ctx, const ActionView& action) override;
  void on_event(Context& ctx, const Event& event) override;
  void observe(EntityId agent, float* obs) const override;
  double reward(EntityId agent) const override;
  void info(EntityId agent, std::int64_t* out) const override;
  void state(float* out) const override;
  void totals(std::int64_t* out) const override;

 private:
  EntityId neighbour(EntityId cell, std::uint64_t direction) const;
  // pcs_v1: sin and cos of the time of day at the boundary, into out[0..1].
  void write_time_of_day(const PcsState& s, float* out) const;
  std::uint32_t free_channels(const PcsState& s) const;
  // Walks an idle phone and sends its NEXT_CALL where it ends up.
  void schedule_idle(Context& ctx, PcsPhone phone);
  // Schedules the first of call end and next move of a phone in a call.
  [[noreturn]] static void throw_stalled(const char* what, const PcsPhone& phone, double t);
  void schedule_in_call(Context& ctx, const PcsPhone& phone);
  // A call attempt, or a handed-off call's arrival: admitted, or blocked
  // (dropped) with the phone going idle.
  void arrive_call(Context& ctx, PcsState& s, PcsPhone& phone, bool admit);
  void arrive_handoff(Context& ctx, PcsState& s, PcsPhone& phone, bool admit);
  // The admitted call's course (NEXT_CALL with a channel free).
  void admit_call(Context& ctx, PcsState& s, PcsPhone& phone);
  // The admitted handoff's course (HANDOFF_IN with a channel free).
  void admit_handoff(Context& ctx, PcsState& s, PcsPhone& phone);
  // pcs_admission: asks the cell about `phone`'s arrival (`kind`: what it
  // comes back as). An arrival while an earlier answer waits to be applied
  // (an event at the same time, earlier in key order) goes after it, unchanged.
  void ask(Context& ctx, PcsState& s, const PcsPhone& phone, EventKind kind);
  void on_admission(Context& ctx, PcsState& s, PcsPhone& phone, EventKind kind);
  // Counts one occurrence, this step and in the total.
  static void count(PcsState& s, std::uint64_t PcsCounters::*counter) {
    ++(s.step.*counter);
    ++(s.total.*counter);
  }
  void take_channel(PcsState& s, PcsPhone& phone);
  void release_channel(PcsState& s, PcsPhone& phone);
  float busy_fraction(std::uint32_t busy) const;
  // The next call attempt of a phone in `cell` after time t, and its next
  // move after t: t + exponential(mean) with pcs_v0's constant traffic, else
  // by thinning (traffic.hpp). Draw from ctx's stream only.
  double next_call_time(Context& ctx, EntityId cell, double t) const;
  double next_move_time(Context& ctx, double t) const;
  // Writes a count observation (scaled, capped at count_cap_ when set).
  float scaled_count(std::uint64_t count) const;

  std::uint32_t width_, height_, channels_, phones_per_cell_;
  double call_interval_, call_duration_, move_interval_;
  double handoff_weight_;
  double count_scale_;  // 1 / expected call attempts per cell per step
  double count_cap_;    // largest scaled count observed; 0: uncapped (pcs_v0)
  bool time_features_;  // observe the time of day (pcs_v1)
  bool admission_;      // cells decide admissions (pcs_admission)
  PcsTraffic traffic_;  // time- and space-varying means (pcs_v1); constant by default
};

std::unique_ptr<Model> make_pcs(Config& config);
std::unique_ptr<Model> make_pcs_v1(Config& config);
std::unique_ptr<Model> make_pcs_admission(Config& config);
// The declarations (pcs/workload.cpp).
WorkloadDecl pcs_workload();
WorkloadDecl pcs_v1_workload();
WorkloadDecl pcs_admission_workload();

}  // namespace seer
