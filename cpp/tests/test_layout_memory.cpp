// The parallel executor keeps one layout of its pending events in memory at
// a time. When a step moves them from the per-entity queues to the serial
// loop's heap (a shed, a probe, a checked step's stand-in), the queues' node
// blocks are freed, unless another instance on the same engine still holds
// events; when they move back, the serial heap is dropped. Through every
// move the outputs stay those of the serial executor.
//
// Checks, on PCS 16x16 with 2 threads (adaptive pool off):
//   - stepping on the queues holds node blocks; a serial-loop step
//     (run_serial_step) leaves the engine with none; stepping on the queues
//     again allocates them again; the digest equals the serial executor's
//     after every step;
//   - a checked step (check_next_steps) moves the events to the stand-in and
//     back: the digest still equals serial's;
//   - two instances on one engine (ParallelBatchRunner): the one moved to
//     the serial loop frees nothing while the other holds events, and both
//     continue exactly.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "builtin_models.hpp"
#include "model_registry.hpp"
#include "parallel_executor.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"

namespace {

int failures = 0;

void fail(const std::string& what) {
  if (++failures <= 20) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

const seer::Config kConfig({{"width", 16}, {"height", 16}, {"move_interval", 45}});

std::unique_ptr<seer::Simulation> make_sim(const char* executor, unsigned threads) {
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  return std::make_unique<seer::Simulation>(seer::make_model("pcs", kConfig), options);
}

seer::ParallelExecutor& parallel_of(seer::Simulation& sim) {
  auto* p = dynamic_cast<seer::ParallelExecutor*>(&sim.executor());
  if (p == nullptr) std::abort();
  return *p;
}

// One step of `sim` on the serial loop of its parallel executor.
void serial_loop_step(seer::Simulation& sim, const std::vector<std::int64_t>& actions) {
  const auto start = std::chrono::steady_clock::now();
  const seer::StepWindow window = sim.begin_step(actions.data(), nullptr);
  seer::StepStats stats;
  parallel_of(sim).run_serial_step(window, stats);
  sim.finish_step(window, stats, start);
}

void check_same(seer::Simulation& sim, seer::Simulation& reference, const std::string& where) {
  if (sim.digest() != reference.digest()) fail(where + ": digest differs from serial");
}

void test_one_instance() {
  auto sim = make_sim("parallel", 2);
  auto reference = make_sim("serial", 1);
  seer::ParallelExecutor& exec = parallel_of(*sim);
  seer::ParallelEngine& engine = exec.engine();
  engine.set_adaptive(false);
  sim->reset(3);
  reference->reset(3);
  const std::vector<std::int64_t> actions(sim->spec().num_agents, 1);
  auto step_both = [&](const std::string& where, bool serial_loop) {
    if (serial_loop) {
      serial_loop_step(*sim, actions);
    } else {
      sim->step(actions.data(), nullptr);
    }
    reference->step(actions.data(), nullptr);
    check_same(*sim, *reference, where);
  };
  step_both("queues step 1", false);
  if (exec.uses_serial_loop() || engine.node_capacity() == 0) fail("queues step: no node blocks");
  step_both("serial-loop step", true);
  if (!exec.uses_serial_loop()) fail("serial-loop step: events not in the serial heap");
  if (engine.node_capacity() != 0) {
    fail("serial-loop step: node blocks kept (" + std::to_string(engine.node_capacity()) + ")");
  }
  step_both("queues step 2", false);
  if (exec.uses_serial_loop() || engine.node_capacity() == 0) fail("queues again: no node blocks");
  sim->check_next_steps(1);
  reference->check_next_steps(1);
  step_both("checked step", false);
  if (exec.uses_serial_loop()) fail("checked step: events left in the serial heap");
  step_both("after the checked step", false);
}

void test_shared_engine() {
  seer::ParallelBatchRunner runner(2);
  auto a = make_sim("serial", 1);
  auto b = make_sim("serial", 1);
  a->set_executor(runner.add_instance());
  b->set_executor(runner.add_instance());
  auto ref_a = make_sim("serial", 1);
  auto ref_b = make_sim("serial", 1);
  seer::ParallelEngine& engine = parallel_of(*a).engine();
  engine.set_adaptive(false);
  a->reset(5);
  b->reset(6);
  ref_a->reset(5);
  ref_b->reset(6);
  const std::vector<std::int64_t> actions(a->spec().num_agents, 2);
  for (auto* s : {a.get(), b.get(), ref_a.get(), ref_b.get()}) s->step(actions.data(), nullptr);
  const std::size_t held = engine.node_capacity();
  serial_loop_step(*a, actions);
  ref_a->step(actions.data(), nullptr);
  if (engine.node_capacity() != held) fail("shared engine: blocks freed while b holds events");
  for (int k = 0; k < 3; ++k) {
    for (auto* s : {a.get(), b.get(), ref_a.get(), ref_b.get()}) s->step(actions.data(), nullptr);
    check_same(*a, *ref_a, "shared engine, a");
    check_same(*b, *ref_b, "shared engine, b");
  }
}

}  // namespace

int main() {
  seer::register_builtin_models();
  test_one_instance();
  test_shared_engine();
  if (failures != 0) {
    std::fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  std::printf("test_layout_memory: ok\n");
  return 0;
}
