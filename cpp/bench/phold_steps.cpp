// Runs PHOLD steps in a bare C++ process, for profilers (callgrind, perf):
// the engine without Python around it. Prints the events handled and the
// final digest, so that two builds can be checked for identical outputs.
//
//   phold_steps [entities=1024] [steps=200] [executor=serial] [threads=1]
//               [work=0] [remote=0.25] [population=1]
//
// Instructions per event of the event loop alone:
//   valgrind --tool=callgrind --toggle-collect='*SerialExecutor::run_step*'
//       build/ctest/phold_steps 1024 200
// and of whole steps (boundary outputs included): --toggle-collect='*Simulation::step*'.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "builtin_models.hpp"
#include "comparison_executors.hpp"
#include "model_registry.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"

int main(int argc, char** argv) {
  auto arg = [&](int i, const char* fallback) { return argc > i ? argv[i] : fallback; };
  const double entities = std::atof(arg(1, "1024"));
  const long steps = std::atol(arg(2, "200"));
  seer::SimulationOptions options;
  options.executor = arg(3, "serial");
  options.num_threads = static_cast<unsigned>(std::atoi(arg(4, "1")));
  const std::map<std::string, double> config = {{"num_entities", entities},
                                                {"work", std::atof(arg(5, "0"))},
                                                {"remote", std::atof(arg(6, "0.25"))},
                                                {"population", std::atof(arg(7, "1"))},
                                                {"dt", 1.0}};
  seer::register_builtin_models();
  seer::register_comparison_executors();
  seer::Simulation sim(seer::make_model("phold", seer::Config(config)), options);
  sim.reset(0);
  for (long s = 0; s < steps; ++s) sim.step(nullptr, nullptr);
  std::printf("events %llu steps %ld digest %016llx\n",
              static_cast<unsigned long long>(sim.events_processed()), steps,
              static_cast<unsigned long long>(sim.digest()));
  return 0;
}
