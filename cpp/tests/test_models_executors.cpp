// Every built-in model (pcs, aircraft, phold) on every executor and several
// thread counts, with actions, in C++: the driver that `make tsan` and
// `make asan` run so that sanitizers see the models' handlers, the boundary
// and the vector env, not only the runtime's data structures.
//
// Checks: the digest and every boundary output after each step equal the
// serial executor's; save/load continues identically; a VectorSimulation on
// one shared engine equals its instances run alone; an interrupt requested
// from another thread mid-step stops the step (Interrupted), the env then
// needs a reset and afterwards runs as serial again.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "builtin_models.hpp"
#include "check.hpp"
#include "comparison_executors.hpp"
#include "model_registry.hpp"
#include "seer/config.hpp"
#include "seer/errors.hpp"
#include "seer/rng.hpp"
#include "simulation.hpp"
#include "vector_simulation.hpp"

namespace {

struct ModelCase {
  const char* name;
  const char* model;
  seer::Config config;
  int steps;
};

std::vector<ModelCase> model_cases() {
  return {
      {"pcs", "pcs",
       seer::Config({{"width", 6}, {"height", 5}, {"phones_per_cell", 6}, {"step_minutes", 30},
                     {"handoff_delay", 2}}),
       8},
      {"pcs-short-lookahead", "pcs",
       seer::Config({{"width", 4}, {"height", 4}, {"phones_per_cell", 4}, {"handoff_delay", 0.5},
                     {"move_interval", 200}}),
       5},
      {"aircraft", "aircraft",
       seer::Config({{"num_uavs", 24}, {"substeps", 4}, {"arena_size", 20}, {"beacon_every", 2}}),
       6},
      {"phold", "phold", seer::Config({{"num_entities", 64}, {"population", 4}, {"remote", 0.5}}),
       6},
  };
}

struct ExecutorCase {
  const char* executor;
  unsigned threads;
};

const ExecutorCase kExecutors[] = {{"parallel", 1}, {"parallel", 2}, {"parallel", 4},
                                   {"locked", 2},   {"locked", 3},   {"barrier", 2},
                                   {"barrier", 4}};

// Deterministic actions for step k: int64 per agent or float32 x dim in [-1, 1].
std::vector<unsigned char> actions_for(const seer::ModelSpec& s, int k) {
  seer::EntityRng rng(1234, static_cast<std::uint32_t>(k));
  std::vector<unsigned char> bytes;
  if (s.action.discrete) {
    std::vector<std::int64_t> a(s.num_agents);
    for (auto& v : a) v = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(s.action.n)));
    bytes.resize(a.size() * sizeof(std::int64_t));
    if (!bytes.empty()) std::memcpy(bytes.data(), a.data(), bytes.size());
  } else {
    std::vector<float> a(static_cast<std::size_t>(s.num_agents) * s.action.dim);
    for (auto& v : a) v = static_cast<float>(2.0 * rng.uniform() - 1.0);
    bytes.resize(a.size() * sizeof(float));
    if (!bytes.empty()) std::memcpy(bytes.data(), a.data(), bytes.size());
  }
  return bytes;
}

// Every boundary output as bytes.
std::string outputs_bytes(const seer::Simulation& sim) {
  const seer::ModelSpec& s = sim.spec();
  const seer::Outputs& o = sim.outputs();
  const std::size_t n = s.num_agents;
  std::string out;
  out.append(reinterpret_cast<const char*>(o.observations), n * s.obs_dim * sizeof(float));
  out.append(reinterpret_cast<const char*>(o.rewards), n * sizeof(double));
  out.append(reinterpret_cast<const char*>(o.terminations), n);
  out.append(reinterpret_cast<const char*>(o.truncations), n);
  out.append(reinterpret_cast<const char*>(o.infos), n * s.info_keys.size() * sizeof(std::int64_t));
  return out;
}

std::unique_ptr<seer::Simulation> make_sim(const ModelCase& m, const char* executor,
                                           unsigned threads) {
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  return std::make_unique<seer::Simulation>(seer::make_model(m.model, m.config), options);
}

void step_with_actions(seer::Simulation& sim, int k) {
  const auto acts = actions_for(sim.spec(), k);
  sim.step(acts.data(), nullptr);
}

// Serial reference: digest and outputs after reset and after every step.
struct Trace {
  std::vector<std::uint64_t> digests;
  std::vector<std::string> outputs;
};

Trace run_trace(seer::Simulation& sim, int steps, std::uint64_t seed) {
  Trace t;
  sim.reset(seed);
  t.digests.push_back(sim.digest());
  t.outputs.push_back(outputs_bytes(sim));
  for (int k = 0; k < steps; ++k) {
    step_with_actions(sim, k);
    t.digests.push_back(sim.digest());
    t.outputs.push_back(outputs_bytes(sim));
  }
  return t;
}

void compare(const Trace& got, const Trace& want, const std::string& label) {
  for (std::size_t k = 0; k < want.digests.size(); ++k) {
    if (got.digests[k] != want.digests[k] || got.outputs[k] != want.outputs[k]) {
      FAIL(label + ": differs from serial after step " + std::to_string(k));
      return;
    }
  }
}

void test_models_match_serial() {
  for (const ModelCase& m : model_cases()) {
    auto serial = make_sim(m, "serial", 1);
    const Trace want = run_trace(*serial, m.steps, 7);
    for (const ExecutorCase& e : kExecutors) {
      const std::string label =
          std::string(m.name) + " on " + e.executor + "/" + std::to_string(e.threads);
      auto sim = make_sim(m, e.executor, e.threads);
      compare(run_trace(*sim, m.steps, 7), want, label);
      // Save mid-episode, load into a fresh instance on another executor: same future.
      sim->reset(7);
      for (int k = 0; k < m.steps / 2; ++k) step_with_actions(*sim, k);
      auto loaded = make_sim(m, "parallel", 3);
      loaded->load(sim->save());
      for (int k = m.steps / 2; k < m.steps; ++k) {
        step_with_actions(*sim, k);
        step_with_actions(*loaded, k);
      }
      if (loaded->digest() != want.digests.back() || sim->digest() != want.digests.back()) {
        FAIL(label + ": save/load does not continue like serial");
      }
    }
  }
}

void test_vector_matches_instances() {
  for (const ModelCase& m : model_cases()) {
    if (m.model == std::string("phold")) continue;  // no actions: covered above
    seer::SimulationOptions options;
    options.executor = "parallel";
    options.num_threads = 3;
    const std::size_t count = 3;
    seer::VectorSimulation vec(m.model, m.config, count, options);
    const seer::ModelSpec& s = vec.spec();
    auto serial = make_sim(m, "serial", 1);
    std::vector<std::uint8_t> modes(count, seer::VectorSimulation::kReset);
    std::vector<std::uint64_t> seeds = {3, 4, 5};
    const auto one = actions_for(s, 0);
    std::vector<unsigned char> batch;
    for (std::size_t i = 0; i < count; ++i) batch.insert(batch.end(), one.begin(), one.end());
    for (const auto& f : vec.step(batch.data(), nullptr, modes.data(), seeds.data())) {
      if (f) FAIL(std::string(m.name) + ": vector reset failed");
    }
    modes.assign(count, seer::VectorSimulation::kStep);
    for (int k = 0; k < 3; ++k) {
      for (const auto& f : vec.step(batch.data(), nullptr, modes.data(), seeds.data())) {
        if (f) FAIL(std::string(m.name) + ": vector step failed");
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      serial->reset(seeds[i]);
      for (int k = 0; k < 3; ++k) serial->step(one.data(), nullptr);
      if (serial->digest() != vec.at(i).digest()) {
        FAIL(std::string(m.name) + ": vector instance " + std::to_string(i) + " differs");
      }
    }
  }
}

// A step that would take minutes, interrupted from another thread.
void test_interrupt_from_another_thread() {
  const seer::Config config(
      {{"width", 4}, {"height", 4}, {"phones_per_cell", 4}, {"step_minutes", 1e10}});
  for (const ExecutorCase& e : kExecutors) {
    const std::string label = std::string("interrupt on ") + e.executor + "/" +
                              std::to_string(e.threads);
    seer::SimulationOptions options;
    options.executor = e.executor;
    options.num_threads = e.threads;
    options.event_budget = 0;
    seer::Simulation sim(seer::make_model("pcs", config), options);
    sim.reset(1);
    std::atomic<bool> stepping{false}, done{false};
    // Each step window starts by clearing requests, so keep asking until it stops.
    std::thread interrupter([&] {
      while (!stepping.load()) std::this_thread::yield();
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        sim.request_interrupt();
      }
    });
    const auto acts = actions_for(sim.spec(), 0);
    const auto start = std::chrono::steady_clock::now();
    bool interrupted = false;
    stepping.store(true);
    try {
      sim.step(acts.data(), nullptr);
    } catch (const seer::Interrupted&) {
      interrupted = true;
    }
    done.store(true);
    interrupter.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!interrupted) FAIL(label + ": the step was not interrupted");
    if (seconds > 5.0) FAIL(label + ": the interrupt took " + std::to_string(seconds) + " s");
    if (!sim.needs_reset()) FAIL(label + ": an interrupted env must need a reset");
    try {
      sim.step(acts.data(), nullptr);
      FAIL(label + ": stepping after an interrupt must be refused");
    } catch (const seer::CallOrderError&) {
    }
    // After reset it is a fresh env: equal to serial.
    seer::SimulationOptions serial_options;
    serial_options.event_budget = 0;
    seer::Simulation serial(seer::make_model("pcs", config), serial_options);
    sim.reset(2);
    serial.reset(2);
    if (sim.digest() != serial.digest() || outputs_bytes(sim) != outputs_bytes(serial)) {
      FAIL(label + ": reset after an interrupt differs from a fresh env");
    }
  }
}

}  // namespace

int main() {
  seer::register_builtin_models();
  seer::register_comparison_executors();
  test_models_match_serial();
  test_vector_matches_instances();
  test_interrupt_from_another_thread();
  return check::report("test_models_executors");
}
