// The parallel executor's work counters (StepStats: rounds, ready,
// queue_reads, wake_checks, events): they must not depend on timing, so that
// tests and benchmarks can assert them. For PCS and PHOLD on 2 and 3 threads
// (adaptive pool off, so every step runs in rounds): the same run twice gives
// the same counters step by step, the entities made ready do not depend on
// the thread count, digests equal the serial executor's, and finding ready
// work costs what the ready entities cost (queue reads per step at most
// 2 x ready entities + a constant per worker and round; in fact one per
// ready entity once the wake calendars are built), not a pass over every
// entity per round.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "builtin_models.hpp"
#include "case_watchdog.hpp"
#include "model_registry.hpp"
#include "parallel_executor.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok && ++failures <= 20) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

struct Case {
  const char* name;
  const char* model;
  std::map<std::string, double> config;
  int steps;
  std::uint64_t entities;
};

struct StepRecord {
  seer::StepStats stats;
  std::uint64_t digest = 0;
};

std::vector<StepRecord> run(const Case& c, const std::string& executor, unsigned threads) {
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  seer::Simulation sim(seer::make_model(c.model, seer::Config(c.config)), options);
  if (auto* parallel = dynamic_cast<seer::ParallelExecutor*>(&sim.executor())) {
    parallel->engine().set_adaptive(false);  // every step in rounds, whatever the machine
  }
  sim.reset(7);
  const std::uint32_t agents = sim.spec().num_agents;
  const std::vector<std::int64_t> actions(agents, 1);
  std::vector<StepRecord> out;
  for (int s = 0; s < c.steps; ++s) {
    sim.step(agents == 0 ? nullptr : actions.data(), nullptr);
    out.push_back({sim.last_step(), sim.digest()});
  }
  return out;
}

std::string at(const Case& c, unsigned threads, std::size_t step) {
  return std::string(c.name) + " x" + std::to_string(threads) + " step " + std::to_string(step);
}

}  // namespace

int main() {
  seer::register_builtin_models();
  seer_test::start_watchdog();
  const Case cases[] = {
      {"pcs 24x24 moves 450", "pcs", {{"width", 24}, {"height", 24}, {"move_interval", 450}}, 6, 576},
      {"pcs 16x16 delay 7", "pcs", {{"width", 16}, {"height", 16}, {"handoff_delay", 7}}, 6, 256},
      {"phold 512", "phold", {{"num_entities", 512}, {"lookahead", 0.1}, {"dt", 1.0}}, 6, 512},
  };
  for (const Case& c : cases) {
    seer_test::start_case(c.name, 120.0);
    const std::vector<StepRecord> serial = run(c, "serial", 1);
    std::vector<StepRecord> two;
    for (unsigned threads : {2u, 3u}) {
      const std::vector<StepRecord> a = run(c, "parallel", threads);
      const std::vector<StepRecord> b = run(c, "parallel", threads);
      std::uint64_t ready = 0, reads = 0, rounds = 0, checks = 0;
      for (std::size_t s = 0; s < a.size(); ++s) {
        const seer::StepStats& x = a[s].stats;
        const seer::StepStats& y = b[s].stats;
        expect(a[s].digest == serial[s].digest, at(c, threads, s) + ": digest differs from serial");
        expect(x.threads == threads, at(c, threads, s) + ": ran on another thread count");
        expect(x.events == serial[s].stats.events, at(c, threads, s) + ": events differ");
        expect(x.rounds == y.rounds && x.ready == y.ready && x.queue_reads == y.queue_reads &&
                   x.events == y.events,
               at(c, threads, s) + ": counters differ between two identical runs");
        expect(x.ready >= x.rounds, at(c, threads, s) + ": a round made nothing ready");
        if (threads == 2) {
          two.push_back(a[s]);
        } else {
          expect(x.ready == two[s].stats.ready && x.rounds == two[s].stats.rounds,
                 at(c, threads, s) + ": ready entities depend on the thread count");
        }
        // One read per drain; finding the ready entities reads no queue (the
        // wake calendars), except a pass over every entity when the
        // calendars are built (the first step).
        expect(x.queue_reads >= x.ready, at(c, threads, s) + ": fewer reads than drains");
        if (s > 0) {
          expect(x.queue_reads <= 2 * x.ready + 8 * threads * x.rounds,
                 at(c, threads, s) + ": queue reads beyond 2 x ready + 8 per worker and round");
          expect(x.queue_reads == x.ready, at(c, threads, s) + ": a pass over the queues");
        }
        // Each wake entry is looked at at most twice (its bucket, then the
        // bucket holding the horizon once more); entries come from drains,
        // sends and step-begin pushes.
        expect(x.wake_checks <= 2 * (2 * x.ready + x.cross_events + 2 * c.entities),
               at(c, threads, s) + ": wake entries looked at more than twice");
        ready += x.ready;
        reads += x.queue_reads;
        checks += x.wake_checks;
        rounds += x.rounds;
      }
      std::printf(
          "  %-20s x%u: %llu rounds, %llu ready, %llu queue reads (%.2f per ready), %llu wake "
          "checks\n",
          c.name, threads, static_cast<unsigned long long>(rounds),
          static_cast<unsigned long long>(ready), static_cast<unsigned long long>(reads),
          static_cast<double>(reads) / static_cast<double>(ready),
          static_cast<unsigned long long>(checks));
    }
  }
  seer_test::end_cases();
  if (failures == 0) {
    std::printf("test_work_counters: all passed\n");
  } else {
    std::fprintf(stderr, "test_work_counters: %d failure(s)\n", failures);
  }
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
