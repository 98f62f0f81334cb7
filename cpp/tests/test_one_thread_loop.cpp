// The parallel executor's one-thread steps (OneThreadLoop) run the serial
// loop over a calendar of their own; a pending event sits there or in its
// entity's queue, and each step moves only the events it handles into the
// structure it steps. Through every mix of steps the outputs and the pending
// events stay those of the serial executor.
//
// Checks (adaptive pool off, 2 threads):
//   - PCS and PHOLD (several seeds): a mix of serial-loop steps
//     (run_serial_step) and steps in rounds, every switch both ways; after
//     every step the digest, and the pending events (every field), equal
//     the serial executor's;
//   - a serial-loop step that stops at its event budget keeps exactly the
//     events the serial executor still holds;
//   - once the last event has left the queues, their storage (node blocks)
//     is freed: one layout in memory;
//   - a checked step (check_next_steps) between serial-loop steps;
//   - two instances on one engine (ParallelBatchRunner): one steps on the
//     serial loop while the other holds events in the same node pools.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "builtin_models.hpp"
#include "model_registry.hpp"
#include "parallel_executor.hpp"
#include "seer/config.hpp"
#include "seer/errors.hpp"
#include "simulation.hpp"

namespace {

int failures = 0;

void fail(const std::string& what) {
  if (++failures <= 20) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

struct Case {
  const char* model;
  std::map<std::string, double> config;
};

const Case kPcs{"pcs", {{"width", 16}, {"height", 16}, {"move_interval", 45}}};
const Case kPhold{"phold", {{"num_entities", 96}, {"population", 3}, {"remote", 0.5}}};

std::unique_ptr<seer::Simulation> make_sim(const Case& c, const char* executor, unsigned threads,
                                           std::uint64_t budget = 50'000'000) {
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  options.event_budget = budget;
  return std::make_unique<seer::Simulation>(seer::make_model(c.model, seer::Config(c.config)),
                                            options);
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

// Every pending event, as bytes, in a fixed order.
std::vector<std::string> pending_bytes(seer::Executor& exec) {
  std::vector<seer::Event> events;
  exec.collect_pending(events);
  std::vector<std::string> out;
  out.reserve(events.size());
  for (const seer::Event& e : events) {
    out.emplace_back(reinterpret_cast<const char*>(&e), sizeof e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_same(seer::Simulation& sim, seer::Simulation& reference, const std::string& where) {
  if (sim.digest() != reference.digest()) fail(where + ": digest differs from serial");
  if (pending_bytes(sim.executor()) != pending_bytes(reference.executor())) {
    fail(where + ": pending events differ from serial (" + std::to_string(sim.pending_count()) +
         " vs " + std::to_string(reference.pending_count()) + ")");
  }
}

void test_mixed_steps(const Case& c, std::uint64_t seed) {
  auto sim = make_sim(c, "parallel", 2);
  auto reference = make_sim(c, "serial", 1);
  parallel_of(*sim).engine().set_adaptive(false);
  sim->reset(seed);
  reference->reset(seed);
  const std::string name = std::string(c.model) + " seed " + std::to_string(seed);
  check_same(*sim, *reference, name + ", after reset");
  const std::vector<std::int64_t> actions(sim->spec().num_agents, 1);
  // Every switch between the two loops, after runs of one to three steps:
  // a single serial-loop step between steps in rounds once published a
  // stale heap top (the rounds after it missed an event).
  const std::string mix = "RSRSSRRSSSRRRSRSSRSRRSRS";
  for (std::size_t step = 0; step < mix.size(); ++step) {
    const bool serial_loop = mix[step] == 'S';
    if (serial_loop) {
      serial_loop_step(*sim, actions);
    } else {
      sim->step(actions.data(), nullptr);
    }
    reference->step(actions.data(), nullptr);
    if (parallel_of(*sim).ran_serial_loop() != serial_loop) fail(name + ": wrong loop reported");
    check_same(*sim, *reference, name + ", step " + std::to_string(step) + " (" + mix[step] + ")");
  }
}

// A serial-loop step that exceeds its budget keeps every event it did not
// handle, as the serial executor does.
void test_budget_stop(const Case& c) {
  auto sim = make_sim(c, "parallel", 2, 40);
  auto reference = make_sim(c, "serial", 1, 40);
  parallel_of(*sim).engine().set_adaptive(false);
  sim->reset(9);
  reference->reset(9);
  const std::vector<std::int64_t> actions(sim->spec().num_agents, 1);
  bool threw = false, reference_threw = false;
  try {
    serial_loop_step(*sim, actions);
  } catch (const seer::EventBudgetExceeded&) {
    threw = true;
  }
  try {
    reference->step(actions.data(), nullptr);
  } catch (const seer::EventBudgetExceeded&) {
    reference_threw = true;
  }
  if (!threw || !reference_threw) fail(std::string(c.model) + ": the budget did not stop a step");
  if (pending_bytes(sim->executor()) != pending_bytes(reference->executor())) {
    fail(std::string(c.model) + ": after the budget stop the pending events differ (" +
         std::to_string(sim->pending_count()) + " vs " +
         std::to_string(reference->pending_count()) + ")");
  }
}

// PHOLD's events are due within a step or two: after a few steps of one
// kind every event sits in that kind's structure.
void test_storage_freed() {
  auto sim = make_sim(kPhold, "parallel", 2);
  auto reference = make_sim(kPhold, "serial", 1);
  seer::ParallelExecutor& exec = parallel_of(*sim);
  seer::ParallelEngine& engine = exec.engine();
  engine.set_adaptive(false);
  sim->reset(4);
  reference->reset(4);
  const std::vector<std::int64_t> actions(sim->spec().num_agents, 1);
  for (int k = 0; k < 3; ++k) {
    sim->step(actions.data(), nullptr);
    reference->step(actions.data(), nullptr);
  }
  if (engine.node_capacity() == 0) fail("steps in rounds hold no node blocks");
  for (int k = 0; k < 6; ++k) {
    serial_loop_step(*sim, actions);
    reference->step(actions.data(), nullptr);
  }
  check_same(*sim, *reference, "serial-loop steps after rounds");
  if (engine.node_capacity() != 0) {
    fail("queues empty, node blocks kept (" + std::to_string(engine.node_capacity()) + ")");
  }
  for (int k = 0; k < 6; ++k) {
    sim->step(actions.data(), nullptr);
    reference->step(actions.data(), nullptr);
  }
  check_same(*sim, *reference, "rounds after serial-loop steps");
  if (engine.node_capacity() == 0) fail("rounds again: no node blocks");
}

void test_checked_step() {
  auto sim = make_sim(kPcs, "parallel", 2);
  auto reference = make_sim(kPcs, "serial", 1);
  parallel_of(*sim).engine().set_adaptive(false);
  sim->reset(3);
  reference->reset(3);
  const std::vector<std::int64_t> actions(sim->spec().num_agents, 1);
  serial_loop_step(*sim, actions);
  reference->step(actions.data(), nullptr);
  sim->check_next_steps(1);
  reference->check_next_steps(1);
  sim->step(actions.data(), nullptr);
  reference->step(actions.data(), nullptr);
  check_same(*sim, *reference, "checked step");
  serial_loop_step(*sim, actions);
  reference->step(actions.data(), nullptr);
  check_same(*sim, *reference, "after the checked step");
}

void test_shared_engine() {
  seer::ParallelBatchRunner runner(2);
  auto a = make_sim(kPcs, "serial", 1);
  auto b = make_sim(kPcs, "serial", 1);
  a->set_executor(runner.add_instance());
  b->set_executor(runner.add_instance());
  auto ref_a = make_sim(kPcs, "serial", 1);
  auto ref_b = make_sim(kPcs, "serial", 1);
  parallel_of(*a).engine().set_adaptive(false);
  a->reset(5);
  b->reset(6);
  ref_a->reset(5);
  ref_b->reset(6);
  const std::vector<std::int64_t> actions(a->spec().num_agents, 2);
  for (auto* s : {a.get(), b.get(), ref_a.get(), ref_b.get()}) s->step(actions.data(), nullptr);
  serial_loop_step(*a, actions);
  ref_a->step(actions.data(), nullptr);
  check_same(*a, *ref_a, "shared engine, a on the serial loop");
  for (int k = 0; k < 3; ++k) {
    for (auto* s : {a.get(), b.get(), ref_a.get(), ref_b.get()}) s->step(actions.data(), nullptr);
    check_same(*a, *ref_a, "shared engine, a");
    check_same(*b, *ref_b, "shared engine, b");
  }
}

}  // namespace

int main() {
  seer::register_builtin_models();
  for (std::uint64_t seed : {1, 2, 7, 42}) {
    test_mixed_steps(kPcs, seed);
    test_mixed_steps(kPhold, seed);
  }
  test_budget_stop(kPcs);
  test_budget_stop(kPhold);
  test_storage_freed();
  test_checked_step();
  test_shared_engine();
  if (failures != 0) {
    std::fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  std::printf("test_one_thread_loop: ok\n");
  return 0;
}
