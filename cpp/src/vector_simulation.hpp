// Many instances of one model stepped together: the core of the vector env.
//
// The instances' executors come from one BatchRunner (make_batch_runner), and
// a step() runs them all with one run_steps() call: with the parallel
// executor that is one parallel region whose executive lists span all
// instances. Outputs are written straight into caller-provided
// batch buffers ([num_envs * num_agents, ...] rows).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "executor.hpp"
#include "seer/config.hpp"
#include "seer/model.hpp"
#include "simulation.hpp"

namespace seer {

class VectorSimulation {
 public:
  // What step() does with each instance.
  enum Mode : std::uint8_t { kStep = 0, kReset = 1, kSkip = 2 };

  // Makes one instance's model (each instance owns its own).
  using ModelMaker = std::function<std::unique_ptr<Model>()>;

  // num_envs instances of the registered model `model` with `config`. The
  // memory check before the instances are built counts `memory_copies`
  // instances (0: num_envs): an async env's first batch counts every batch.
  VectorSimulation(const std::string& model, const Config& config, std::size_t num_envs,
                   const SimulationOptions& options, std::size_t memory_copies = 0);
  // num_envs instances of the models `make` returns (a compiled NumbaModel).
  VectorSimulation(const ModelMaker& make, std::size_t num_envs, const SimulationOptions& options,
                   std::size_t memory_copies = 0);

  std::size_t size() const { return sims_.size(); }
  // std::out_of_range -> IndexError. Do not set_executor() on an instance:
  // its executor belongs to the batch runner's batch.
  Simulation& at(std::size_t i) {
    repair_if_torn();
    return *sims_.at(i);
  }
  const ModelSpec& spec() const { return sims_.front()->spec(); }

  // Interrupts every instance's step in progress (Simulation::request_interrupt),
  // also one that has not begun yet: the request holds until clear_interrupt()
  // (a step's begin_step() clears each instance's own flag, so step() sets it
  // again after them). Async-signal-safe.
  void request_interrupt() {
    interrupt_.store(true, std::memory_order_relaxed);
    // seq_cst fence: pairs with step()'s fence (its clears, then its read of interrupt_).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (auto& sim : sims_) sim->request_interrupt();
  }
  // Before a step that an earlier request must not stop (with no step running).
  void clear_interrupt() { interrupt_.store(false, std::memory_order_relaxed); }

  // In a child forked while a call ran on another thread: the instances and
  // the batch runner were mid-call (the threads changing them do not exist
  // here). Only sets a flag (safe in a pthread_atfork child handler); the
  // next call through this class builds a fresh runner and every instance
  // then needs a reset.
  void forget_call_in_flight() { torn_ = true; }

  // Contract checks on the next `steps` steps of every instance
  // (Simulation::check_next_steps).
  void check_next_steps(std::uint64_t steps) {
    for (auto& sim : sims_) sim->check_next_steps(steps);
  }

  // A step is coming soon: wake parked worker threads (Executor::prewake).
  void prewake();
  // Joins every worker thread (close()); the next step starts fresh ones.
  void release_threads();
  // The next batch steps run on one thread until a probe pays
  // (Executor::start_on_one_thread).
  void start_on_one_thread(const std::string& why);

  // Points instance i's outputs at rows [i * num_agents, (i+1) * num_agents)
  // of the batch buffers.
  void redirect_outputs(const Outputs& batch);

  // One call for the whole batch. modes[i]: step with actions (rows of
  // instance i in `actions`/`alive`), reset with seeds[i], or skip.
  // Returns one exception per instance (null if it went well); a failed
  // instance needs a reset, the others completed their step. An instance
  // whose step is checked (Simulation::check_next_steps) runs it alone,
  // one handler at a time, before the batch.
  std::vector<std::exception_ptr> step(const void* actions, const std::uint8_t* alive,
                                       const std::uint8_t* modes, const std::uint64_t* seeds);

 private:
  // After forget_call_in_flight(): a fresh runner and executors (the torn
  // ones are leaked: their state and threads were the parent's); every
  // instance needs a reset.
  void repair_if_torn();

  SimulationOptions options_;
  std::vector<std::unique_ptr<Simulation>> sims_;
  std::map<std::string, double> config_used_;  // the registered model's parameters, as read
  std::unique_ptr<BatchRunner> runner_;  // made every instance's executor
  std::atomic<bool> interrupt_{false};   // request_interrupt() until clear_interrupt()
  bool torn_ = false;                    // forget_call_in_flight()
  // Scratch reused across steps (no allocation after the first).
  std::vector<std::size_t> batch_;  // instances stepping this call
  std::vector<std::exception_ptr> batch_failures_;
  std::vector<StepWindow> windows_;
  std::vector<StepStats> stats_;
};

}  // namespace seer
