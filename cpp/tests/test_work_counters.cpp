// The parallel executor's work counters (StepStats::rounds, ready,
// queue_reads, events) count work, not time: for one config and seed they are
// the same on every run and every thread count of the rounds (2, 3, 4, with
// the adaptive pool off so that no step sheds to the serial loop), and they
// obey what the round structure implies:
//   - queue_reads == entities + ready: the step's begin reads every entity's
//     queue line once, and after that a round reads only the queues of the
//     entities its wake calendars list, each of which has an event to handle
//     (no round scans the entities that have nothing to do);
//   - 0 < ready <= events, and ready <= rounds x entities;
//   - a step that ran the serial loop (one thread) reports ready and
//     queue_reads 0, and the serial executor's events equal the rounds'.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "builtin_models.hpp"
#include "check.hpp"
#include "model_registry.hpp"
#include "parallel_executor.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"

namespace {

struct Counters {
  std::uint64_t events, rounds, ready, queue_reads;
  bool operator==(const Counters& o) const {
    return events == o.events && rounds == o.rounds && ready == o.ready &&
           queue_reads == o.queue_reads;
  }
};

std::string show(const Counters& c) {
  return "events " + std::to_string(c.events) + " rounds " + std::to_string(c.rounds) +
         " ready " + std::to_string(c.ready) + " queue_reads " + std::to_string(c.queue_reads);
}

// Per step, the counters of `steps` steps of `model` on `executor`.
std::vector<Counters> run(const char* model, const seer::Config& config, const char* executor,
                          unsigned threads, int steps) {
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  seer::Simulation sim(seer::make_model(model, config), options);
  if (auto* parallel = dynamic_cast<seer::ParallelExecutor*>(&sim.executor())) {
    parallel->engine().set_adaptive(false);
  }
  sim.reset(7);
  // A fixed valid action for every agent: 1 (discrete) or 0.5 in every dimension.
  const seer::ModelSpec& spec = sim.spec();
  const std::vector<std::int64_t> discrete(spec.num_agents, 1);
  const std::vector<float> continuous(static_cast<std::size_t>(spec.num_agents) * spec.action.dim, 0.5f);
  const void* actions = spec.action.discrete ? static_cast<const void*>(discrete.data())
                                             : static_cast<const void*>(continuous.data());
  std::vector<Counters> out;
  for (int s = 0; s < steps; ++s) {
    sim.step(actions, nullptr);
    const seer::StepStats& last = sim.last_step();
    out.push_back({last.events, last.rounds, last.ready, last.queue_reads});
  }
  return out;
}

void check_model(const char* name, const char* model, const seer::Config& config,
                 std::uint64_t entities, int steps) {
  const std::vector<Counters> serial = run(model, config, "serial", 1, steps);
  const std::vector<Counters> one = run(model, config, "parallel", 1, steps);
  const std::vector<Counters> two = run(model, config, "parallel", 2, steps);
  for (int s = 0; s < steps; ++s) {
    const std::string where = std::string(name) + " step " + std::to_string(s) + ": ";
    const Counters& c = two[s];
    if (c.events != serial[s].events) FAIL(where + "events differ from serial: " + show(c));
    if (one[s].ready != 0 || one[s].queue_reads != 0) {
      FAIL(where + "the serial loop reported round counters: " + show(one[s]));
    }
    if (c.queue_reads != entities + c.ready)
      FAIL(where + "queue_reads != entities + ready: " + show(c));
    if (c.events > 0 && (c.ready == 0 || c.ready > c.events))
      FAIL(where + "ready outside (0, events]: " + show(c));
    if (c.ready > c.rounds * entities) FAIL(where + "ready > rounds x entities: " + show(c));
  }
  for (unsigned threads : {2u, 3u, 4u}) {
    for (int repeat = 0; repeat < 2; ++repeat) {
      const std::vector<Counters> again = run(model, config, "parallel", threads, steps);
      for (int s = 0; s < steps; ++s) {
        if (!(again[s] == two[s])) {
          FAIL(std::string(name) + " step " + std::to_string(s) + " on " + std::to_string(threads) +
               " threads: " + show(again[s]) + " vs " + show(two[s]));
        }
      }
    }
  }
}

}  // namespace

int main() {
  seer::register_builtin_models();
  check_model("pcs", "pcs",
              seer::Config({{"width", 12}, {"height", 10}, {"move_interval", 45}, {"handoff_delay", 1}}),
              120, 5);
  check_model("phold", "phold",
              seer::Config({{"num_entities", 256}, {"population", 4}, {"remote", 0.5}}), 256, 5);
  check_model("aircraft", "aircraft",
              seer::Config({{"num_uavs", 40}, {"substeps", 4}, {"arena_size", 30}, {"beacon_every", 2}}),
              40, 4);
  return check::report("test_work_counters");
}
