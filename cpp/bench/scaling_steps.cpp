// One case of the many-core table (bench/many_core.py): a model's steps on
// one executor and thread count in a bare C++ process, every step on every
// thread (the adaptive pool off: a scaling table must not depend on the
// machine's load). Prints one JSON line: the median wall time of a step, the
// work counters per step (events, cross-entity events, rounds, ready entity
// visits, queue reads; the same on every thread count) and the final digest,
// equal across executors for byte equality.
//
//   scaling_steps MODEL EXECUTOR THREADS STEPS WARMUP [key=value ...]
//   scaling_steps pcs parallel 16 8 3 width=128 height=128 move_interval=450
//   scaling_steps phold barrier 16 20 3 num_entities=16384 work=400
//
// EXECUTOR is a registered executor, or "rounds1": the parallel executor's
// rounds on the caller alone (a checked step's and a fresh shed's one-thread
// steps), which the many-core model starts from. Every agent takes action 1.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "builtin_models.hpp"
#include "comparison_executors.hpp"
#include "model_registry.hpp"
#include "parallel_executor.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: scaling_steps MODEL EXECUTOR THREADS STEPS WARMUP [k=v ...]\n");
    return 2;
  }
  const std::string model = argv[1];
  const std::string executor = argv[2];
  const bool rounds_on_one = executor == "rounds1";
  std::map<std::string, double> config;
  for (int i = 6; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "not key=value: %s\n", argv[i]);
      return 2;
    }
    config[kv.substr(0, eq)] = std::atof(kv.c_str() + eq + 1);
  }
  seer::SimulationOptions options;
  options.executor = rounds_on_one ? "parallel" : executor;
  options.num_threads = rounds_on_one ? 2 : static_cast<unsigned>(std::atoi(argv[3]));
  const long steps = std::atol(argv[4]);
  const long warmup = std::atol(argv[5]);
  seer::register_builtin_models();
  seer::register_comparison_executors();
  seer::Simulation sim(seer::make_model(model, seer::Config(config)), options);
  auto* parallel = dynamic_cast<seer::ParallelExecutor*>(&sim.executor());
  if (parallel != nullptr) parallel->engine().set_adaptive(false);
  sim.reset(0);
  const std::vector<std::int64_t> actions(sim.spec().num_agents, 1);
  std::vector<double> step_ms;
  seer::StepStats total;
  for (long s = 0; s < warmup + steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    if (rounds_on_one) {
      const seer::StepWindow window = sim.begin_step(actions.data(), nullptr);
      seer::StepStats stats;
      parallel->before_rounds(window);
      std::exception_ptr failure;
      parallel->engine().run_step_on_caller(parallel->instance(), window, stats, failure);
      if (failure) std::rethrow_exception(failure);
      sim.finish_step(window, stats, start);
    } else {
      sim.step(actions.data(), nullptr);
    }
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (s < warmup) continue;
    step_ms.push_back(took.count());
    const seer::StepStats& last = sim.last_step();
    total.events += last.events;
    total.cross_events += last.cross_events;
    total.rounds += last.rounds;
    total.ready += last.ready;
    total.queue_reads += last.queue_reads;
  }
  std::sort(step_ms.begin(), step_ms.end());
  const double median = step_ms.empty() ? 0.0 : step_ms[step_ms.size() / 2];
  const double n = steps > 0 ? static_cast<double>(steps) : 1.0;
  std::printf(
      "{\"median_ms\": %.4f, \"min_ms\": %.4f, \"events\": %.1f, \"cross_events\": %.1f, "
      "\"rounds\": %.2f, \"ready\": %.1f, \"queue_reads\": %.1f, \"steps\": %ld, "
      "\"entities\": %u, \"digest\": \"%016llx\"}\n",
      median, step_ms.empty() ? 0.0 : step_ms.front(), total.events / n, total.cross_events / n,
      total.rounds / n, total.ready / n, total.queue_reads / n, steps, sim.spec().num_entities,
      static_cast<unsigned long long>(sim.digest()));
  return 0;
}
