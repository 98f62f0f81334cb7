// Serial equivalence of the parallel executor on PHOLD, in C++ (so that it
// also runs under ThreadSanitizer): for several configurations, the digest
// (states, random streams, sequence counters, pending events, clock) after
// every step must equal the serial executor's, for 1, 2, 3, 4 and 8 threads
// (and the locked/barrier comparison executors at 2 and 4).
// Configurations cover lookahead << dt (many horizon rounds per step),
// lookahead >= dt (one round), work > 0, ties in time (mean 0), more threads
// than entities, no remote events, all remote events; plus a reset with a new
// seed on the same executor, and switching executor mid-run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "builtin_models.hpp"
#include "case_watchdog.hpp"
#include "check.hpp"
#include "comparison_executors.hpp"
#include "model_registry.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"

namespace {

using seer_test::end_cases;
using seer_test::start_case;
using seer_test::start_watchdog;

struct Case {
  const char* name;
  std::map<std::string, double> config;
  int steps;
};

std::unique_ptr<seer::Simulation> make_sim(const Case& c, const std::string& executor,
                                           unsigned threads) {
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  return std::make_unique<seer::Simulation>(seer::make_model("phold", seer::Config(c.config)),
                                            options);
}

// Digest and event count after reset and after every step.
struct Trace {
  std::vector<std::uint64_t> digests;
  std::vector<std::uint64_t> events;
  std::uint64_t rounds = 0;
};

Trace run(seer::Simulation& sim, std::uint64_t seed, int steps) {
  Trace t;
  sim.reset(seed);
  t.digests.push_back(sim.digest());
  t.events.push_back(sim.events_processed());
  for (int s = 0; s < steps; ++s) {
    sim.step(nullptr, nullptr);
    t.digests.push_back(sim.digest());
    t.events.push_back(sim.events_processed());
    t.rounds += sim.last_step().rounds;
  }
  return t;
}

void compare(const Trace& serial, const Trace& other, const std::string& what) {
  for (std::size_t i = 0; i < serial.digests.size(); ++i) {
    if (other.digests[i] != serial.digests[i] || other.events[i] != serial.events[i]) {
      FAIL(what + ": digest differs from serial after step " + std::to_string(i) + " (events " +
           std::to_string(other.events[i]) + " vs " + std::to_string(serial.events[i]) + ")");
      return;  // later steps differ too; one line is enough
    }
  }
}

// The second episode (same executor, new seed) only needs to show that
// reset() leaves nothing behind: a few steps are enough.
int steps_for(const Case& c, std::size_t episode) {
  return episode == 0 ? c.steps : std::max(2, c.steps / 4);
}

}  // namespace

int main() {
  seer::register_builtin_models();
  seer::register_comparison_executors();
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Case> cases = {
      {"default", {{"num_entities", 64}, {"population", 4}}, 15},
      {"lookahead<<dt",
       {{"num_entities", 96}, {"population", 2}, {"remote", 0.5}, {"lookahead", 0.01}},
       6},  // ~65 rounds per step
      {"work>0",
       {{"num_entities", 48}, {"population", 2}, {"lookahead", 0.05}, {"work", 300}},
       10},
      {"ties(mean=0)",
       {{"num_entities", 16}, {"population", 8}, {"remote", 1.0}, {"mean", 0.0},
        {"lookahead", 0.25}},
       12},
      {"lookahead>=dt", {{"num_entities", 200}, {"population", 3}, {"lookahead", 2.0}}, 15},
      {"threads>entities", {{"num_entities", 3}, {"population", 5}, {"remote", 0.6}}, 12},
      {"remote=0", {{"num_entities", 40}, {"population", 2}, {"remote", 0.0}}, 10},
      {"one-entity", {{"num_entities", 1}, {"population", 4}}, 10},
      {"dt!=1",
       {{"num_entities", 50}, {"population", 2}, {"dt", 0.37}, {"lookahead", 0.03},
        {"mean", 0.2}},
       12},
  };
  // The parallel executor at every thread count; the comparison executors
  // (which must be serial-equivalent too) at two.
  const std::pair<const char*, unsigned> executors[] = {
      {"parallel", 1}, {"parallel", 2}, {"parallel", 3}, {"parallel", 4}, {"parallel", 8},
      {"locked", 2},   {"locked", 4},   {"barrier", 2},  {"barrier", 4}};
  const std::uint64_t seeds[] = {7, 1234567};

  start_watchdog();
  for (const Case& c : cases) {
    start_case(c.name, 300.0);
    auto serial = make_sim(c, "serial", 1);
    std::vector<Trace> reference;
    for (std::size_t i = 0; i < std::size(seeds); ++i) {
      reference.push_back(run(*serial, seeds[i], steps_for(c, i)));
    }
    if (reference[0].events.back() == 0) FAIL(std::string(c.name) + ": no events processed");
    std::uint64_t max_rounds = 0;
    std::string times;
    for (const auto& [executor, threads] : executors) {
      const auto t0 = std::chrono::steady_clock::now();
      auto parallel = make_sim(c, executor, threads);
      // Two episodes on the same executor: reset must leave nothing behind.
      for (std::size_t i = 0; i < std::size(seeds); ++i) {
        const Trace t = run(*parallel, seeds[i], steps_for(c, i));
        max_rounds = std::max(max_rounds, t.rounds);
        compare(reference[i], t,
                std::string(c.name) + " " + executor + "/" + std::to_string(threads) + " seed " +
                    std::to_string(seeds[i]));
      }
      char buf[48];
      std::snprintf(buf, sizeof buf, " %c%u:%.2fs", executor[0], threads,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      times += buf;
    }
    std::printf("  %-17s %2d steps, %5llu events, %4llu rounds;%s\n", c.name, c.steps,
                static_cast<unsigned long long>(reference[0].events.back()),
                static_cast<unsigned long long>(max_rounds), times.c_str());
  }

  // Switching executor mid-episode moves the pending events over; the run
  // must continue exactly as the serial one.
  {
    start_case("executor switched mid-run", 300.0);
    const Case& c = cases[1];
    auto serial = make_sim(c, "serial", 1);
    const Trace reference = run(*serial, 99, 6);
    auto sim = make_sim(c, "serial", 1);
    sim->reset(99);
    Trace t;
    t.digests.push_back(sim->digest());
    t.events.push_back(sim->events_processed());
    const char* executors[] = {"parallel", "serial", "parallel", "parallel", "serial", "parallel"};
    const unsigned threads[] = {4, 1, 2, 3, 1, 8};
    for (int s = 0; s < 6; ++s) {
      sim->set_executor(executors[s], threads[s]);
      sim->step(nullptr, nullptr);
      t.digests.push_back(sim->digest());
      t.events.push_back(sim->events_processed());
    }
    compare(reference, t, "executor switched mid-run");
  }

  // A lookahead below half an ulp of the clock makes LB + L == LB. The
  // contract then also requires cross-entity events to be strictly later
  // than now, and the horizon advances to at least nextafter(LB): no hang.
  for (const char* executor : {"parallel", "barrier"}) {
    const Case c{"lookahead<ulp(now)",
                 {{"num_entities", 8}, {"population", 2}, {"lookahead", 1e-13}, {"mean", 1e4},
                  {"dt", 1e4}},
                 3};
    start_case(c.name, 20.0);
    auto serial = make_sim(c, "serial", 1);
    auto parallel = make_sim(c, executor, 2);
    compare(run(*serial, 1, c.steps), run(*parallel, 1, c.steps), c.name);
    std::printf("  %-17s ok\n", c.name);
  }
  end_cases();

  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("test_parallel_phold: %.2f s\n", secs);
  return check::report("test_parallel_phold");
}
