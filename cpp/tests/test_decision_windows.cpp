// Decision windows on the parallel executor: a step's later windows continue
// it (ParallelEngine::continue_step) without the begin read of every
// entity's queue, and give the serial executor's bytes.
//
// pcs_admission 16x16 and 64x64 on parallel/2 (adaptive pool off, so both
// threads stay) against the serial executor, every arrival admitted: the digests
// after every step are equal, and the queue lines read per step stay far
// below one read of every queue per window (what a begin read per window
// costs). Then the same with the adaptive pool on and worker 1 stalled for
// the first steps (as if it had lost its core): windows shed to one thread,
// run the serial loop once a probe confirms it, and probe back, with the
// serial executor's bytes after every step (a probe after serial-loop
// windows hands the queues only its own window's events: the next window
// must not continue from the calendars then).
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "builtin_models.hpp"
#include "check.hpp"
#include "model_registry.hpp"
#include "parallel_executor.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"

namespace {

std::map<std::string, double> grid(int side) { return {{"width", side}, {"height", side}}; }

std::unique_ptr<seer::Simulation> make(const std::string& executor, unsigned threads,
                                       bool adaptive = false, int side = 16) {
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  options.decisions = seer::DecisionMode::kWindows;
  auto sim = std::make_unique<seer::Simulation>(
      seer::make_model("pcs_admission", seer::Config(grid(side))), options);
  if (auto* parallel = dynamic_cast<seer::ParallelExecutor*>(&sim->executor())) {
    parallel->engine().set_adaptive(adaptive);  // off: both threads, whatever the machine does
  }
  return sim;
}

// Runs `sim` to the end of its current step, admitting every arrival;
// returns the windows (advance() calls that ran events) it took.
std::uint64_t finish_step(seer::Simulation& sim) {
  std::uint64_t windows = 0;
  for (;;) {
    const auto progress = sim.advance();
    ++windows;
    if (progress == seer::Simulation::Progress::kBoundary) return windows;
    while (!sim.requests().empty()) {
      const std::vector<std::int64_t> admit(sim.requests().size(), 1);
      sim.answer(admit.data());
    }
  }
}

// side 64: windows of hundreds of requests, whose answers' events go into
// the queues on the pool (ParallelExecutor::insert_lists).
void test_same_bytes_and_no_begin_read_per_window(int side, int steps) {
  auto serial = make("serial", 1, false, side);
  auto parallel = make("parallel", 2, false, side);
  serial->reset(7);
  parallel->reset(7);
  const std::uint64_t entities = parallel->spec().num_entities;
  for (int step = 0; step < steps; ++step) {
    finish_step(*serial);
    const std::uint64_t windows = finish_step(*parallel);
    CHECK(serial->digest() == parallel->digest(), "digest after step " + std::to_string(step));
    const seer::StepStats& stats = parallel->last_step();
    // One begin read a step (every queue once), then only what the rounds
    // list: a begin read per window would read windows x entities lines.
    CHECK(windows > 10, "the step ran in windows (" + std::to_string(windows) + ")");
    CHECK(stats.queue_reads < entities + 4 * stats.ready,
          "queue reads " + std::to_string(stats.queue_reads) + " for " +
              std::to_string(windows) + " windows of " + std::to_string(entities) +
              " entities (ready " + std::to_string(stats.ready) + ")");
  }
}

void test_sheds_and_probes_between_windows() {
  auto serial = make("serial", 1);
  auto parallel = make("parallel", 2, true);
  auto& engine = dynamic_cast<seer::ParallelExecutor&>(parallel->executor()).engine();
  serial->reset(11);
  parallel->reset(11);
  engine.set_stall_for_testing(1, std::chrono::microseconds(1500));
  bool serial_loop = false;
  for (int step = 0; step < 8; ++step) {
    if (step == 3) engine.set_stall_for_testing(1, std::chrono::microseconds(0));
    finish_step(*serial);
    finish_step(*parallel);
    serial_loop = serial_loop || engine.adaptive().reduction_confirmed();
    CHECK(serial->digest() == parallel->digest(),
          "digest after step " + std::to_string(step) + " (" + parallel->thread_decision() + ")");
  }
  CHECK(serial_loop, "a shed was confirmed (the serial loop ran between windows)");
}

}  // namespace

int main() {
  seer::register_builtin_models();
  test_same_bytes_and_no_begin_read_per_window(16, 6);
  test_same_bytes_and_no_begin_read_per_window(64, 12);
  test_sheds_and_probes_between_windows();
  return check::report("test_decision_windows");
}
