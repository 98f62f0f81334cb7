// VectorSimulation: several instances on one shared ParallelEngine (one
// parallel region, one executive list across instances), and on every other
// executor's batch runner, must give, instance by instance, the digests of
// separate serial Simulations -- for PHOLD, PCS and Aircraft, with instances
// that reset mid-run (mode kReset) and skip (kSkip). An interrupt requested
// before a step stops it. Runs under ThreadSanitizer via `make tsan`.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "builtin_models.hpp"
#include "check.hpp"
#include "comparison_executors.hpp"
#include "executor.hpp"
#include "model_registry.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"
#include "vector_simulation.hpp"

namespace {

struct Case {
  const char* model;
  std::map<std::string, double> config;
  bool discrete;
  std::size_t action_dim;
};

void run_case(const Case& c, std::size_t num_envs, const char* executor, unsigned threads) {
  seer::SimulationOptions parallel;
  parallel.executor = executor;
  parallel.num_threads = threads;
  seer::VectorSimulation vec(c.model, seer::Config(c.config), num_envs, parallel);
  const seer::ModelSpec& spec = vec.spec();
  std::vector<std::unique_ptr<seer::Simulation>> refs;
  for (std::size_t i = 0; i < num_envs; ++i) {
    refs.push_back(std::make_unique<seer::Simulation>(seer::make_model(c.model, seer::Config(c.config)),
                                                      seer::SimulationOptions{}));
  }
  const std::size_t rows = num_envs * spec.num_agents;
  std::vector<float> obs(rows * spec.obs_dim);
  std::vector<double> rewards(rows);
  std::vector<std::uint8_t> terms(rows), truncs(rows);
  std::vector<std::int64_t> infos(rows * spec.info_keys.size() + 1);
  vec.redirect_outputs({obs.data(), rewards.data(), terms.data(), truncs.data(), infos.data()});
  std::vector<std::int64_t> discrete(rows, 1);
  std::vector<float> box(rows * c.action_dim, 0.1f);
  const void* actions = c.discrete ? static_cast<const void*>(discrete.data()) : box.data();
  const std::size_t bytes_per_agent = c.discrete ? sizeof(std::int64_t) : c.action_dim * sizeof(float);
  std::vector<std::uint8_t> modes(num_envs, seer::VectorSimulation::kReset);
  std::vector<std::uint64_t> seeds(num_envs);
  for (std::size_t i = 0; i < num_envs; ++i) {
    seeds[i] = 100 + i;
    refs[i]->reset(seeds[i]);
  }
  vec.step(actions, nullptr, modes.data(), seeds.data());
  for (int step = 0; step < 12; ++step) {
    for (std::size_t i = 0; i < num_envs; ++i) {
      // Instance 1 resets at step 5, instance 2 skips step 3; the rest step.
      modes[i] = (i == 1 && step == 5) ? seer::VectorSimulation::kReset
                 : (i == 2 && step == 3) ? seer::VectorSimulation::kSkip
                                         : seer::VectorSimulation::kStep;
      seeds[i] = 900 + i;
      const void* acts = static_cast<const unsigned char*>(actions) +
                         i * spec.num_agents * bytes_per_agent;
      if (modes[i] == seer::VectorSimulation::kReset) refs[i]->reset(seeds[i]);
      if (modes[i] == seer::VectorSimulation::kStep) refs[i]->step(acts, nullptr);
    }
    const auto errors = vec.step(actions, nullptr, modes.data(), seeds.data());
    for (std::size_t i = 0; i < num_envs; ++i) {
      if (errors[i]) FAIL(std::string(c.model) + ": instance raised");
      if (vec.at(i).digest() != refs[i]->digest()) {
        FAIL(std::string(c.model) + ": instance " + std::to_string(i) + " differs after step " +
             std::to_string(step) + " (" + executor + ", " + std::to_string(threads) + " threads)");
      }
      const float* ref_obs = refs[i]->outputs().observations;
      for (std::size_t k = 0; k < spec.num_agents * spec.obs_dim; ++k) {
        if (obs[i * spec.num_agents * spec.obs_dim + k] != ref_obs[k]) {
          FAIL(std::string(c.model) + ": batch observation buffer differs");
          break;
        }
      }
    }
  }
}

// An interrupt requested before step() holds until clear_interrupt(): the
// step's begin_step() clears each instance's own flag, yet a step that only
// an interrupt ends (event_budget 0, a step of 1e10 minutes) still stops, on
// every instance, and they need a reset; after clear_interrupt() a step runs.
void interrupt_before_step(const char* executor, unsigned threads) {
  const std::string label = std::string("interrupt before step on ") + executor;
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  options.event_budget = 0;
  const std::map<std::string, double> config = {
      {"width", 4}, {"height", 4}, {"step_minutes", 1e10}};
  seer::VectorSimulation vec("pcs", seer::Config(config), 2, options);
  const std::size_t rows = 2 * vec.spec().num_agents;
  std::vector<std::int64_t> actions(rows, 0);
  const std::vector<std::uint64_t> seeds = {1, 2};
  const std::vector<std::uint8_t> reset(2, seer::VectorSimulation::kReset);
  const std::vector<std::uint8_t> step(2, seer::VectorSimulation::kStep);
  auto failed = vec.step(actions.data(), nullptr, reset.data(), seeds.data());
  if (failed[0] || failed[1]) FAIL(label + ": reset failed");
  vec.request_interrupt();
  failed = vec.step(actions.data(), nullptr, step.data(), seeds.data());
  for (std::size_t i = 0; i < 2; ++i) {
    if (!failed[i]) FAIL(label + ": instance " + std::to_string(i) + " was not interrupted");
    if (!vec.at(i).needs_reset()) FAIL(label + ": an interrupted instance does not need a reset");
  }
  vec.clear_interrupt();
  failed = vec.step(actions.data(), nullptr, reset.data(), seeds.data());
  if (failed[0] || failed[1]) FAIL(label + ": reset after the interrupt failed");
}

}  // namespace

int main() {
  seer::register_builtin_models();
  seer::register_comparison_executors();
  const std::vector<Case> cases = {
      {"phold", {{"num_entities", 40}, {"population", 2}, {"lookahead", 0.05}}, true, 0},
      {"pcs", {{"width", 4}, {"height", 4}, {"move_interval", 100}}, true, 0},
      {"aircraft", {{"num_uavs", 12}, {"substeps", 4}}, false, 4},
  };
  for (const Case& c : cases) {
    for (unsigned threads : {1u, 2u, 4u}) run_case(c, 3, "parallel", threads);
    run_case(c, 3, "serial", 1);
    run_case(c, 3, "locked", 2);
    run_case(c, 3, "barrier", 2);
  }
  interrupt_before_step("serial", 1);
  interrupt_before_step("parallel", 2);
  // The batch runner factory checks names and thread counts as make_executor does.
  for (const auto& [name, threads] : {std::pair<const char*, unsigned>{"nope", 1}, {"parallel", 0}}) {
    try {
      seer::make_batch_runner(name, threads);
      FAIL(std::string("make_batch_runner accepted ") + name + " x" + std::to_string(threads));
    } catch (const std::invalid_argument&) {
    }
  }
  return check::report("test_vector_simulation");
}
