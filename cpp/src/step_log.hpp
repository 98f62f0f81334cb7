// The inputs of an episode's first steps, while each was a checked step: what
// a Simulation needs to run a checked step again from the episode's reset.
//
// A checked step first only detects a foreign write (WriteCheck::kDetect);
// naming the writer takes a rerun of the step with the full check. The
// rerun used to start from a copy of the step's start kept at every checked
// step: every state and every pending event (PCS 256x256: ~115 MB, the env's
// peak memory went from 255 to 373 MB). Instead, while every step since the
// reset was checked (the default: the first two steps of an env), the
// Simulation records only the inputs (this log: the seed, each step's window,
// actions and alive flags, 0.5 MB a step there) and rebuilds the step's
// start by running those steps again from the reset (Simulation's
// rewind_to_step_start). Those steps passed the check, so they keep to the
// contract and run again identically; the cost, a few steps, is paid only
// when a foreign write was found, which ends the episode anyway.
//
// The log stops (and frees what it held) at an unchecked step, when full
// (kMaxSteps steps or kMaxBytes), after the last checked step, and is of no
// use after a load() (another generation): a checked step then keeps its
// start as before, but only what a rerun reads (Simulation::keep_step_start).
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "executor.hpp"
#include "seer/model.hpp"

namespace seer {

class StepLog {
 public:
  // Replaying more steps than this costs more than the copy it saves is worth
  // waiting for; more bytes than this is no longer small.
  static constexpr std::size_t kMaxSteps = 8;
  static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

  struct Step {
    StepWindow window;                 // actions and alive cleared: below
    std::vector<unsigned char> actions;  // the raw action array (empty: none)
    std::vector<std::uint8_t> alive;     // one per agent (empty: all alive)
    bool has_actions = false;
    bool has_alive = false;
  };

  // A reset (the `generation`-th reset or load) with `seed` completed.
  void start(std::uint64_t seed, std::uint64_t generation) {
    stop();
    seed_ = seed;
    generation_ = generation;
    active_ = true;
  }
  // Frees the log; nothing can be replayed until the next start().
  void stop() {
    active_ = false;
    bytes_ = 0;
    steps_ = std::vector<Step>();
  }
  // Records the inputs of the step about to run, the steps_done-th since
  // the last start(), if every step before it is recorded; returns whether
  // it did (else the log stops). `actions` holds action_bytes bytes (null:
  // none); `alive` num_agents flags (null: all alive).
  bool record(std::uint64_t generation, std::uint64_t steps_done, const StepWindow& window,
              const void* actions, std::size_t action_bytes, const std::uint8_t* alive) {
    const std::size_t bytes = (actions != nullptr ? action_bytes : 0) +
                              (alive != nullptr ? window.num_agents : 0);
    if (!active_ || generation != generation_ || steps_done != steps_.size() ||
        steps_.size() == kMaxSteps || bytes > kMaxBytes - bytes_) {
      stop();
      return false;
    }
    Step step;
    step.window = window;
    step.window.actions = nullptr;
    step.window.alive = nullptr;
    step.has_actions = actions != nullptr;
    step.has_alive = alive != nullptr;
    if (step.has_actions) {
      const auto* raw = static_cast<const unsigned char*>(actions);
      step.actions.assign(raw, raw + action_bytes);
    }
    if (step.has_alive) step.alive.assign(alive, alive + window.num_agents);
    steps_.push_back(std::move(step));
    bytes_ += bytes;
    return true;
  }
  std::uint64_t seed() const { return seed_; }
  const std::vector<Step>& steps() const { return steps_; }

 private:
  bool active_ = false;
  std::uint64_t seed_ = 0;
  std::uint64_t generation_ = 0;
  std::size_t bytes_ = 0;
  std::vector<Step> steps_;
};

}  // namespace seer
