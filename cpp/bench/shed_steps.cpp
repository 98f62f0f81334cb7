// Times what one episode of the adaptive pool costs a PCS env on parallel-2:
// worker 1 sleeps `stall_us` at the start of every round (as if it had lost
// its core) for `stall_steps` steps from step `stall_at`, the pool sheds to
// one thread, probes, and (once the stall is over) goes back to two. Prints
// each step (threads, wall time, how it ran: rounds or the serial loop), then
// the excess of the steps after the stall over as many steady steps (the
// median of the last 10), which is what the episode cost beyond the stall
// itself, and the final digest (equal to a serial run's).
//
//   shed_steps [width=64] [height=64] [steps=50] [stall_at=10] [stall_steps=3]
//              [stall_us=300] [move_interval=450]
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

int main(int argc, char** argv) {
  auto arg = [&](int i, const char* fallback) { return argc > i ? argv[i] : fallback; };
  const std::map<std::string, double> config = {{"width", std::atof(arg(1, "64"))},
                                                {"height", std::atof(arg(2, "64"))},
                                                {"move_interval", std::atof(arg(7, "450"))}};
  const long steps = std::atol(arg(3, "50"));
  const long stall_at = std::atol(arg(4, "10"));
  const long stall_end = stall_at + std::atol(arg(5, "3"));
  const std::chrono::microseconds stall(std::atol(arg(6, "300")));
  seer::register_builtin_models();
  seer::SimulationOptions options;
  options.executor = "parallel";
  options.num_threads = 2;
  seer::Simulation sim(seer::make_model("pcs", seer::Config(config)), options);
  auto& parallel = dynamic_cast<seer::ParallelExecutor&>(sim.executor());
  sim.reset(0);
  const std::vector<std::int64_t> actions(sim.spec().num_agents, 1);
  std::vector<double> after_stall;
  for (long s = 0; s < steps; ++s) {
    if (s == stall_at) parallel.engine().set_stall_for_testing(1, stall);
    if (s == stall_end) parallel.engine().set_stall_for_testing(1, std::chrono::microseconds(0));
    const auto start = std::chrono::steady_clock::now();
    sim.step(actions.data(), nullptr);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (s >= stall_end) after_stall.push_back(ms);
    const char* how = parallel.ran_serial_loop() ? "serial loop" : "rounds";
    std::printf("step %3ld threads %u %8.3f ms %s\n", s, sim.last_step().threads, ms, how);
  }
  if (after_stall.size() < 10) return 0;
  std::vector<double> tail(after_stall.end() - 10, after_stall.end());
  std::nth_element(tail.begin(), tail.begin() + 5, tail.end());
  const double steady = tail[5];
  double total = 0.0;
  for (const double ms : after_stall) total += ms;
  std::printf("after the stall: %zu steps %.3f ms, steady %.3f ms a step, excess %.3f ms (%.1f "
              "steady steps) digest %016llx\n",
              after_stall.size(), total, steady, total - steady * after_stall.size(),
              (total - steady * after_stall.size()) / steady,
              static_cast<unsigned long long>(sim.digest()));
  return 0;
}
