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
//   - the first serial-loop step after rounds moves every event of the
//     queues into the calendar, block by block, and frees the node blocks:
//     one layout in memory; a move whose receiver throws part-way puts every
//     event it did not take back into its queue (none lost or doubled);
//   - a probe (one step in rounds after serial-loop steps) takes only its
//     due events from the calendar; a second step in rounds takes the rest
//     and frees the calendar;
//   - a checked step (check_next_steps) between serial-loop steps, and one
//     between steps in rounds, which runs in rounds on the caller and moves
//     no event;
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
#include <new>
#include <string>
#include <vector>

#include "builtin_models.hpp"
#include "check.hpp"
#include "model_registry.hpp"
#include "parallel_executor.hpp"
#include "seer/config.hpp"
#include "seer/errors.hpp"
#include "simulation.hpp"

namespace {

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
  if (sim.digest() != reference.digest()) FAIL(where + ": digest differs from serial");
  if (pending_bytes(sim.executor()) != pending_bytes(reference.executor())) {
    FAIL(where + ": pending events differ from serial (" + std::to_string(sim.pending_count()) +
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
    if (parallel_of(*sim).ran_serial_loop() != serial_loop) FAIL(name + ": wrong loop reported");
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
  if (!threw || !reference_threw) FAIL(std::string(c.model) + ": the budget did not stop a step");
  if (pending_bytes(sim->executor()) != pending_bytes(reference->executor())) {
    FAIL(std::string(c.model) + ": after the budget stop the pending events differ (" +
         std::to_string(sim->pending_count()) + " vs " +
         std::to_string(reference->pending_count()) + ")");
  }
}

// One layout at a time: the serial loop takes every event at once; a probe
// takes only its due events from the calendar, a second step in rounds the
// rest.
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
  if (engine.node_capacity() == 0) FAIL("steps in rounds hold no node blocks");
  serial_loop_step(*sim, actions);
  reference->step(actions.data(), nullptr);
  check_same(*sim, *reference, "the first serial-loop step after rounds");
  if (engine.node_capacity() != 0) {
    FAIL("serial loop: node blocks kept (" + std::to_string(engine.node_capacity()) + ")");
  }
  if (exec.calendar_size() != sim->pending_count()) FAIL("serial loop: events left in the queues");
  for (int k = 0; k < 3; ++k) {
    serial_loop_step(*sim, actions);
    reference->step(actions.data(), nullptr);
  }
  sim->step(actions.data(), nullptr);  // a probe
  reference->step(actions.data(), nullptr);
  check_same(*sim, *reference, "a probe after serial-loop steps");
  if (exec.calendar_size() == 0) FAIL("a probe took every event from the calendar");
  sim->step(actions.data(), nullptr);  // the probe restored the threads
  reference->step(actions.data(), nullptr);
  check_same(*sim, *reference, "the second step in rounds");
  if (exec.calendar_size() != 0) FAIL("the second step in rounds left events in the calendar");
  for (int k = 0; k < 4; ++k) {
    sim->step(actions.data(), nullptr);
    reference->step(actions.data(), nullptr);
  }
  check_same(*sim, *reference, "rounds after serial-loop steps");
  if (engine.node_capacity() == 0) FAIL("rounds again: no node blocks");
}

// ParallelEngine::move_out_events with a receiver that throws after `after`
// events: the events it took are in the calendar, the others back in their
// queues, none lost or doubled; stepping on gives the serial bytes.
void test_move_rolls_back(const Case& c, std::size_t after) {
  auto sim = make_sim(c, "parallel", 2);
  auto reference = make_sim(c, "serial", 1);
  seer::ParallelExecutor& exec = parallel_of(*sim);
  exec.engine().set_adaptive(false);
  sim->reset(8);
  reference->reset(8);
  const std::vector<std::int64_t> actions(sim->spec().num_agents, 1);
  for (int k = 0; k < 2; ++k) {
    sim->step(actions.data(), nullptr);
    reference->step(actions.data(), nullptr);
  }
  const std::vector<std::string> before = pending_bytes(sim->executor());
  std::vector<seer::Event> taken;
  bool threw = false;
  try {
    exec.engine().move_out_events(exec.instance(), [&](const seer::Event& e) {
      if (taken.size() == after) throw std::bad_alloc();
      taken.push_back(e);
    });
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  const std::string name = std::string(c.model) + " move stopped after " + std::to_string(after);
  if (!threw) FAIL(name + ": the receiver's exception did not propagate");
  // What was taken goes where a real receiver (the calendar) would have put it.
  for (const seer::Event& e : taken) exec.one_thread_insert_for_testing(e);
  if (pending_bytes(sim->executor()) != before) FAIL(name + ": events lost or doubled");
  for (int k = 0; k < 3; ++k) {
    sim->step(actions.data(), nullptr);
    reference->step(actions.data(), nullptr);
    check_same(*sim, *reference, name + ", step " + std::to_string(k));
  }
  serial_loop_step(*sim, actions);
  reference->step(actions.data(), nullptr);
  check_same(*sim, *reference, name + ", then the serial loop");
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
  // Between steps in rounds: rounds on the caller alone, where the events
  // are (no stand-in, nothing into the calendar, no node block more).
  for (int k = 0; k < 2; ++k) {
    sim->step(actions.data(), nullptr);
    reference->step(actions.data(), nullptr);
  }
  const std::size_t nodes = parallel_of(*sim).engine().node_capacity();
  sim->check_next_steps(2);
  reference->check_next_steps(2);
  for (int k = 0; k < 2; ++k) {
    sim->step(actions.data(), nullptr);
    reference->step(actions.data(), nullptr);
    check_same(*sim, *reference, "checked step in rounds");
    if (sim->last_step().threads != 1 || sim->last_step().rounds < 1) {
      FAIL("a checked step did not run on one thread");
    }
    if (parallel_of(*sim).calendar_size() != 0) FAIL("a checked step moved events to the calendar");
  }
  if (parallel_of(*sim).engine().node_capacity() > nodes + 2 * seer::NodePool::kBlock) {
    FAIL("checked steps in rounds grew the node pools (" + std::to_string(nodes) + " -> " +
         std::to_string(parallel_of(*sim).engine().node_capacity()) + ")");
  }
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
  for (std::size_t after : {0, 1, 57, 250}) {
    test_move_rolls_back(kPcs, after);
    test_move_rolls_back(kPhold, after);
  }
  test_checked_step();
  test_shared_engine();
  return check::report("test_one_thread_loop");
}
