// One env instance: a model, its dispatcher and executor, the step loop and
// the boundary outputs. The bindings wrap this; so does the vector env.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dispatcher.hpp"
#include "executor.hpp"
#include "seer/model.hpp"
#include "step_log.hpp"

namespace seer {

class CompiledModel;

// How agents act: all at every step (on_action at the step's start), or
// when their handlers ask (Context::request_decision, decision_steps.cpp):
// answered a lookahead window at a time, or one request at a time in the
// serial order (the reference the windows must equal, byte for byte).
enum class DecisionMode : std::uint8_t { kLockstep, kWindows, kOneAtATime };

// A waiting request: `agent` asked at `time`.
struct DecisionRequest {
  EntityId agent = 0;
  double time = 0.0;
};
// By (time, agent): the order requests are listed and answered in.
void sort_requests(std::vector<DecisionRequest>& requests);

struct SimulationOptions {
  std::string executor = "serial";
  unsigned num_threads = 1;
  bool check = false;                        // contract checks on every step
  std::uint64_t event_budget = 50'000'000;   // per step; 0: unlimited
  // The memory guard (set_pending_limit); 0: pending_event_limit(spec), which
  // reads the memory available (a vector env computes it once for its copies).
  std::uint64_t pending_limit = 0;
  DecisionMode decisions = DecisionMode::kLockstep;  // kOneAtATime: serial executor only
};

// Not thread-safe: one caller at a time (the GIL-released Python call).
class Simulation {
 public:
  Simulation(std::unique_ptr<Model> model, const SimulationOptions& options);

  const ModelSpec& spec() const { return model_->spec(); }
  const SimulationOptions& options() const { return options_; }
  Executor& executor() { return *executor_; }
  // Swaps the executor (pending events move over). Not during a step.
  void set_executor(const std::string& name, unsigned num_threads);
  void set_executor(std::unique_ptr<Executor> executor);

  // Contract checks on the next `steps` steps (across resets), on top of
  // options().check (every step). A checked step finds any write to an
  // entity's state outside its own handlers (WriteCheck::kDetect; when it
  // finds one, the step reruns from its start with kFull, which names the
  // writer), and that the snapshot did not change. The write check needs one
  // handler at a time: a multi-threaded executor runs a checked step on the
  // caller alone where it can (the parallel executor: no pending event moves
  // for it), else on a serial stand-in (the pending events move over and
  // back). Checking only observes: outputs are byte-identical either way;
  // only the cost changes. Not during a step.
  void check_next_steps(std::uint64_t steps) { checked_steps_left_ = steps; }
  std::uint64_t checked_steps_left() const { return checked_steps_left_; }
  // Whether the step begun last (begin_step) is checked: its caller must
  // then run it with run_checked(), not on the executor.
  bool step_checked() const { return step_checked_; }
  // Runs a checked window (begin_step() returned it) one handler at a time.
  void run_checked(const StepWindow& window, StepStats& stats);

  // Starts an episode: states, streams (Philox key (seed, entity)), initial
  // events, first snapshot and outputs.
  void reset(std::uint64_t seed);
  // One step with the agents' actions. `actions` is int64[num_agents] for
  // Discrete spaces, float32[num_agents * dim] for Box. `alive`
  // (uint8[num_agents], or null: all alive) selects who acts.
  void step(const void* actions, const std::uint8_t* alive);
  // -- Event-driven decisions (options().decisions != kLockstep;
  // decision_steps.cpp). Instead of step(): advance() runs windows of at most
  // one lookahead until agents wait for actions (kDecisions: requests(),
  // their observation rows written) or a step ends (kBoundary: every output
  // written, as after step()); answer() gives the waiting agents their
  // actions (as step()'s array, one row per request, in requests() order)
  // and runs each agent on to the window's end: it may ask again (requests()
  // not empty: answer again).
  enum class Progress : std::uint8_t { kDecisions, kBoundary };
  Progress advance();
  void answer(const void* actions);
  // Sorted by (time, agent); empty unless advance() returned kDecisions and
  // they are not answered yet.
  const std::vector<DecisionRequest>& requests() const { return requests_; }
  // A planted bug for the tests (DecisionBoard::plant_early_release_for_testing).
  void plant_early_release_for_testing() {
    dispatcher_.decisions().plant_early_release_for_testing();
  }
  // The window the requests are due in: [begin, end).
  double window_begin() const { return decision_.window_begin; }
  double window_end() const { return decision_.window_end; }

  // Steps without actions until the clock reaches t (PHOLD, tests).
  void run_until(double t);

  // step() in three parts, so that a vector env can run the middle part of
  // many instances in one parallel region: begin_step() validates the call
  // order and returns the window; the caller runs it on the executor; then
  // finish_step() advances the clock and builds the boundary outputs.
  StepWindow begin_step(const void* actions, const std::uint8_t* alive);
  void finish_step(const StepWindow& window, const StepStats& stats,
                   std::chrono::steady_clock::time_point started);

  // Stops the reset/step in progress at every entity's next handler; it then
  // throws Interrupted and the env needs reset(). Thread-safe and
  // async-signal-safe (a SIGINT handler calls it). Each reset and step
  // window starts with the request cleared.
  void request_interrupt() { dispatcher_.request_stop(); }

  // Handlers run under a contract check (checked steps and resets), by kind:
  // what a check exercised (Dispatcher::CheckedCounts).
  const Dispatcher::CheckedCounts& checked_counts() const {
    return dispatcher_.checked_counts();
  }

  // The memory guard (StepWindow::pending_limit): at most `events` pending
  // at once during a step, else EventBudgetExceeded. Set at construction to
  // pending_event_limit(spec()); a vector env shares it among its copies.
  void set_pending_limit(std::uint64_t events) { pending_limit_ = events; }
  std::uint64_t pending_limit() const { return pending_limit_; }

  bool needs_reset() const { return needs_reset_; }
  // Counts completed reset() and load() calls: a wrapper that keeps its own
  // episode bookkeeping sees that the state was replaced behind its back.
  std::uint64_t generation() const { return generation_; }
  // In a child forked while a call ran on another thread: the state and the
  // executor are torn (the threads that were changing them do not exist
  // here). Only sets flags (safe in a pthread_atfork child handler); reset()
  // then starts from a fresh executor.
  void forget_call_in_flight() {
    needs_reset_ = true;
    executor_torn_ = true;
  }
  // The result of the step in progress or last completed is dropped (a vector
  // env's close() during a background step): only reset() or load() may follow.
  void require_reset() { needs_reset_ = true; }
  // A vector env forked mid-call: its batch runner gives this instance a fresh
  // executor. The torn one is leaked (its state and threads were the
  // parent's) and so is the checked steps' stand-in; the env needs reset().
  void replace_torn_executor(std::unique_ptr<Executor> fresh);
  double now() const { return now_; }
  std::uint64_t steps() const { return steps_; }
  std::uint64_t events_processed() const { return events_total_; }
  const StepStats& last_step() const { return last_step_; }
  // Why the last step ran on last_step().threads threads: the executor's
  // reason, or that a checked step runs one handler at a time.
  std::string thread_decision() const;
  double last_step_seconds() const { return last_step_seconds_; }
  std::size_t pending_count() const { return executor_->pending_count(); }
  std::vector<Event> pending_events() const;  // sorted by key
  // Pointers to the pending events in key order, valid until the pending
  // set changes: where the executor holds them (Executor::pending_in_place),
  // else into `storage`, a copy (key_order.hpp: a radix sort of the times'
  // bits); save() gathers straight from them into the snapshot.
  std::vector<const Event*> pending_in_key_order(std::vector<Event>& storage) const;

  // Hash of every entity state, snapshot, random stream position, sequence
  // counter and pending event (sorted by key), plus the clock.
  std::uint64_t digest() const;
  // Everything needed to continue identically (pickle). A save carries the
  // identity() of its Simulation; load() refuses one of another identity
  // (another model, size or parameter) with a message naming what differs.
  std::string save() const;
  // save() into out[0, size), size == save_size(): no copy beyond the
  // snapshot itself (the bindings write straight into a Python bytes).
  std::size_t save_size() const;
  void save_into(char* out, std::size_t size) const;
  void load(const char* data, std::size_t size);
  void load(const std::string& blob) { load(blob.data(), blob.size()); }
  // The parameters the model was built with (make_model's `used`): part of
  // identity(). Models built without the registry (compiled ones) have none.
  void set_config(std::map<std::string, double> used) { config_ = std::move(used); }
  // "key=value" lines: the model's name, the parameters (set_config), then
  // the spec's sizes and timing ("spec." keys, known for every model).
  std::string identity() const;

  // Boundary outputs of the last reset/step, one row per agent.
  const Outputs& outputs() const { return out_; }
  // With spec().action_mask: ValueError-worthy std::invalid_argument naming
  // the agent, the action and the valid ones when an action the agent's
  // current mask (outputs().action_masks) forbids is given. Lockstep: one
  // int64 per agent, rows with alive[a] == 0 skipped (alive may be null);
  // decisions: one per requests() entry. Checks only; runs nothing.
  void check_action_masks(const void* actions, const std::uint8_t* alive) const;
  // Writes outputs to `out` from now on (current values are copied over).
  // The buffers must outlive this Simulation or the next redirect.
  void redirect_outputs(const Outputs& out);
  void state(float* out) const { model_->state(out); }
  Model& model() { return *model_; }

 private:
  void require_ready(const char* what) const;
  StepWindow make_window(double t_end, const void* actions, const std::uint8_t* alive);
  // Whether the step beginning now is checked (options().check, or one of
  // check_next_steps()'s); a checked step's snapshot hashes are taken here.
  bool begin_checked_step();
  void run_window(double t_end, const void* actions, const std::uint8_t* alive);
  // Runs the window on the executor, or with run_checked() when it is checked.
  void execute(const StepWindow& window, StepStats& stats);
  // One hash per entity of its snapshot record (checked steps compare them).
  void snapshot_hashes(std::vector<std::uint64_t>& out) const;
  void boundary();
  // Model::action_mask of agents [begin, end) into out_.action_masks, as 0/1.
  void write_masks(EntityId begin, EntityId end);
  // -- Event-driven decisions (decision_steps.cpp).
  void require_decisions(const char* what) const;
  void open_decision_step();
  StepWindow decision_window() const;
  // Runs (or resumes) the open window; true when agents wait.
  bool run_decision_window();
  void collect_requests();
  void finish_decision_step();
  std::size_t decisions_size() const;  // the save's decision record (save_load.cpp)
  // Runs agent r's action, then its held and new events before the window's
  // end; events for later or for others go to `later`.
  void answer_one(const DecisionRequest& r, const ActionView& action, std::vector<Event>& later,
                  StepStats& stats);
  // Where the decisions of the step in progress stand.
  struct DecisionClock {
    bool step_open = false;    // on_step_begin ran; the step is not finished
    bool window_open = false;  // its events ran, but agents still wait in it
    double window_begin = 0.0, window_end = 0.0;
    StepStats stats;           // the step's, over its windows
    std::chrono::steady_clock::time_point started;
  };

  // -- Checked steps (checked_steps.cpp).
  // Runs the window, or on_init of every entity, one handler at a time with
  // the write check `mode`: on the executor where it can
  // (Executor::run_step_one_at_a_time), else on the serial stand-in, with
  // the pending events moved there and back.
  void step_one_at_a_time(WriteCheck mode, const StepWindow& window, StepStats& stats);
  void initialize_one_at_a_time();
  // What a checked step keeps of its start, to rerun it if detection finds a
  // foreign write: the inputs since the reset (step_log_) while it can, else
  // keep_step_start(). rewind_to_step_start() then rebuilds the start and
  // returns the window to rerun; rerun() runs it with the full check.
  void note_step_start(const StepWindow& window, const void* actions);
  void keep_step_start(double t_end);
  StepWindow rewind_to_step_start(const StepWindow& window);
  void rerun(const StepWindow& window, StepStats& stats);

  std::unique_ptr<Model> model_;
  CompiledModel* compiled_ = nullptr;  // model_, when it is one
  SimulationOptions options_;
  Dispatcher dispatcher_;
  std::unique_ptr<Executor> executor_;
  bool has_reset_ = false;
  bool needs_reset_ = false;
  bool executor_torn_ = false;  // forked mid-call: reset() replaces the executor
  std::uint64_t pending_limit_ = UINT64_MAX;  // the memory guard (set_pending_limit)
  std::map<std::string, double> config_;      // set_config: part of identity()
  std::uint64_t generation_ = 0;              // completed resets and loads
  double now_ = 0.0;
  std::uint64_t steps_ = 0;
  std::uint64_t events_total_ = 0;
  StepStats last_step_;
  double last_step_seconds_ = 0.0;
  std::vector<ActionView> action_views_;
  std::vector<std::uint64_t> snapshot_before_;  // checked steps: snapshot_hashes at step start
  std::uint64_t checked_steps_left_ = 0;  // check_next_steps()
  bool step_checked_ = false;             // the current/last window is checked
  // The inputs of the steps since the reset, while each was checked: a
  // checked step that finds a foreign write reruns from the reset with them.
  StepLog step_log_;
  // A checked step's start when the log cannot rebuild it (after a load, an
  // unchecked step or the log's first kMaxSteps): what its handlers may
  // change (not the clock or the outputs, which only finish_step changes)
  // and the pending events the step handles (time < t_end; the later ones
  // stay where they are during the step), to rerun it on a serial stand-in.
  struct StepStart {
    std::vector<unsigned char> states, publics;
    std::vector<EntityRuntime> runtimes;
    std::vector<Event> due;
    bool kept = false;
  };
  StepStart step_start_;
  std::unique_ptr<Executor> stand_in_;    // serial, for checked steps (made on first use)
  DecisionClock decision_;
  std::vector<DecisionRequest> requests_;
  // answer()'s scratch, kept between calls: each answered agent's events
  // for later (or for others), and what its run handled.
  std::vector<std::vector<Event>> answer_later_;
  std::vector<StepStats> answer_stats_;
  Outputs out_;  // where boundary outputs go: obs_ and the rest, or a vector env's batch rows
  std::vector<float> obs_;
  std::vector<double> rewards_;
  std::vector<std::uint8_t> terminated_, truncated_;
  std::vector<std::int64_t> infos_;
  std::vector<std::uint8_t> masks_;  // [num_agents, action.n] when spec().action_mask
};

}  // namespace seer
