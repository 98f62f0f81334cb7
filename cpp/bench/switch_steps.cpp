// Times PCS steps on the parallel executor as its thread count switches
// between 2 (rounds) and 1 (the serial loop), as the adaptive pool's sheds
// and probes do: what a step costs right after a switch, against a step
// after one of its own kind. Prints the median of each kind and the final
// digest, which equals a serial run's.
//
//   switch_steps [width=64] [height=64] [cycles=6] [move_interval=450] [cycle=RRRSSS]
//
// Each cycle runs `cycle`: R a step in rounds on 2 threads, S a one-thread
// step (after 4 warm-up steps in rounds). "first" is the first step of its
// kind after the other; RSSSSSSS is the adaptive pool's failing probes.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "builtin_models.hpp"
#include "model_registry.hpp"
#include "parallel_executor.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  auto arg = [&](int i, const char* fallback) { return argc > i ? argv[i] : fallback; };
  const std::map<std::string, double> config = {{"width", std::atof(arg(1, "64"))},
                                                {"height", std::atof(arg(2, "64"))},
                                                {"move_interval", std::atof(arg(4, "450"))}};
  const long cycles = std::atol(arg(3, "6"));
  const std::string cycle = arg(5, "RRRSSS");
  seer::register_builtin_models();
  seer::SimulationOptions options;
  options.executor = "parallel";
  options.num_threads = 2;
  seer::Simulation sim(seer::make_model("pcs", seer::Config(config)), options);
  auto& parallel = dynamic_cast<seer::ParallelExecutor&>(sim.executor());
  parallel.engine().set_adaptive(false);
  sim.reset(0);
  const std::vector<std::int64_t> actions(sim.spec().num_agents, 1);
  using Clock = std::chrono::steady_clock;
  auto rounds_step = [&] {
    const auto start = Clock::now();
    sim.step(actions.data(), nullptr);
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  auto serial_loop_step = [&] {
    const auto start = Clock::now();
    const seer::StepWindow window = sim.begin_step(actions.data(), nullptr);
    seer::StepStats stats;
    parallel.run_serial_step(window, stats);
    sim.finish_step(window, stats, start);
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  for (int s = 0; s < 4; ++s) rounds_step();
  std::vector<double> first_rounds, rounds, first_serial, serial;
  char last = 'R';
  for (long c = 0; c < cycles; ++c) {
    for (const char kind : cycle) {
      if (kind == 'R') {
        (last == 'R' ? rounds : first_rounds).push_back(rounds_step());
      } else {
        (last == 'S' ? serial : first_serial).push_back(serial_loop_step());
      }
      last = kind;
    }
  }
  std::printf("pending %zu first_serial_ms %.3f serial_ms %.3f first_rounds_ms %.3f "
              "rounds_ms %.3f digest %016llx\n",
              sim.pending_count(), median(first_serial), median(serial), median(first_rounds),
              median(rounds), static_cast<unsigned long long>(sim.digest()));
  return 0;
}
