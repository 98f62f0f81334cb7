// Runs PCS steps in a bare C++ process, for profilers (callgrind, perf): the
// communication-heavy workload without Python around it. Every cell keeps
// `guard` guard channels. Prints the median wall time of a step, the events,
// rounds and work counters of the whole run and the final digest, so that two
// builds can be checked for identical outputs. `ready` and `queue_reads` are
// the parallel executor's work counters (StepStats).
//
//   pcs_steps [width=64] [height=64] [steps=20] [executor=serial] [threads=1]
//             [move_interval=450] [handoff_delay=1] [warmup=0] [guard=1]
//
// Instructions of the parallel executor's steps (rounds only; the first
// `warmup` steps are not collected):
//   valgrind --tool=callgrind --toggle-collect='*ParallelEngine::run_steps*'
//       build/ctest/pcs_steps 64 64 20 parallel 2 450 1 5
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
  auto arg = [&](int i, const char* fallback) { return argc > i ? argv[i] : fallback; };
  const double width = std::atof(arg(1, "64"));
  const double height = std::atof(arg(2, "64"));
  const long steps = std::atol(arg(3, "20"));
  seer::SimulationOptions options;
  options.executor = arg(4, "serial");
  options.num_threads = static_cast<unsigned>(std::atoi(arg(5, "1")));
  const std::map<std::string, double> config = {{"width", width},
                                                {"height", height},
                                                {"move_interval", std::atof(arg(6, "450"))},
                                                {"handoff_delay", std::atof(arg(7, "1"))}};
  const long warmup = std::atol(arg(8, "0"));
  const std::int64_t guard = std::atol(arg(9, "1"));
  seer::register_builtin_models();
  seer::register_comparison_executors();
  seer::Simulation sim(seer::make_model("pcs", seer::Config(config)), options);
  // Every step on every thread: the adaptive pool would shed threads on a
  // busy machine, and a profile should not depend on the machine's load.
  if (auto* parallel = dynamic_cast<seer::ParallelExecutor*>(&sim.executor())) {
    parallel->engine().set_adaptive(false);
  }
  sim.reset(0);
  const std::vector<std::int64_t> actions(sim.spec().num_agents, guard);
  seer::StepStats total;
  std::vector<double> step_ms;
  for (long s = 0; s < warmup + steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    sim.step(actions.data(), nullptr);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (s < warmup) continue;
    step_ms.push_back(took.count());
    const seer::StepStats& last = sim.last_step();
    total.events += last.events;
    total.rounds += last.rounds;
    total.ready += last.ready;
    total.queue_reads += last.queue_reads;
  }
  std::sort(step_ms.begin(), step_ms.end());
  const double median_ms = step_ms.empty() ? 0.0 : step_ms[step_ms.size() / 2];
  std::printf("median_ms %.3f events %llu rounds %llu ready %llu queue_reads %llu steps %ld "
              "digest %016llx\n",
              median_ms,
              static_cast<unsigned long long>(total.events),
              static_cast<unsigned long long>(total.rounds),
              static_cast<unsigned long long>(total.ready),
              static_cast<unsigned long long>(total.queue_reads), steps,
              static_cast<unsigned long long>(sim.digest()));
  return 0;
}
