// AdaptivePool: the decision rule on its own, then in the engine.
//
//  1. Rule: clean steps keep every thread; kStallSteps stalled steps in a
//     row halve the count (down to one), one severely stalled step (half
//     the team's time waiting, 2+ parked waits) at once; a probe (twice the threads) comes
//     after kFirstProbeInterval steps; a stalled probe doubles the interval
//     (capped), a clean one restores the count; short waits (no park) or a
//     small waiting share never count as a stall; disabling restores all.
//     Speed: a stall faster per event than fewer threads were recently is
//     kept; a stalled probe that beats them restores; a shed whose stalled
//     steps beat its first measured steps on fewer threads is undone then.
//  2. Engine: PHOLD on parallel/2 with a test hook that makes worker 1 sleep
//     3 ms at the start of every round (as if it had lost its core): the
//     env sheds to one thread within a few steps, says why, and after the
//     hook is removed a probe runs on two threads (and restores them unless
//     the machine itself stalls it); the digest after every step equals the
//     serial executor's throughout. Freshly shed to one thread, the env
//     steps in rounds on the caller alone (the shed is tentative: no pending
//     event moves); once a probe has stalled too (the shed is confirmed), it
//     runs the serial executor's loop (one pass, "serial loop" in the
//     decision); back on two threads it runs in rounds again. An env with
//     too many events to move (ParallelEngine::kSerialLoopMaxNodes, lowered
//     for the test) stays in rounds on one thread once confirmed.
//  Started reduced (a pool chosen on busy CPUs): one thread and the serial
//     loop from the first step, probes skipped while busy, a clean probe
//     once quiet restores the pool; no effect on a pool of one or with
//     adaptation off.
//  3. The same on a vector env (one shared engine, ParallelBatchRunner): every
//     instance steps in rounds on one thread once shed, and runs its serial
//     loop once a probe confirmed the shed, each equal to a serial env.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adaptive_pool.hpp"
#include "builtin_models.hpp"
#include "check.hpp"
#include "model_registry.hpp"
#include "parallel_engine.hpp"
#include "parallel_executor.hpp"
#include "platform.hpp"
#include "seer/config.hpp"
#include "simulation.hpp"
#include "vector_simulation.hpp"

namespace {

seer::StepTiming stalled_step(unsigned threads) {
  seer::StepTiming t;
  t.threads = threads;
  t.wall_nanos = 1000000;
  t.wait_nanos = 400000ull * threads;  // 40% of the team's time: stalled, not severely
  t.parked_waits = 3;
  t.rounds = 10;
  return t;
}

// Waited 60% of the team's time over 3 parked waits: half the threads would
// have been as fast.
seer::StepTiming severe_step(unsigned threads) {
  seer::StepTiming t = stalled_step(threads);
  t.wait_nanos = 600000ull * threads;
  return t;
}

seer::StepTiming clean_step(unsigned threads) {
  seer::StepTiming t = stalled_step(threads);
  t.wait_nanos = 10000ull * threads;
  t.parked_waits = 0;
  return t;
}

void test_rule() {
  using seer::AdaptivePool;
  AdaptivePool pool(4);
  CHECK(pool.next_threads() == 4, "starts on every thread");
  for (int i = 0; i < 20; ++i) pool.record(clean_step(4));
  CHECK(pool.next_threads() == 4 && pool.reductions() == 0, "clean steps keep every thread");

  // Waiting a lot but never parking (many short rounds) is not a stall,
  // and neither is a parked wait in a step that mostly worked.
  seer::StepTiming short_waits = stalled_step(4);
  short_waits.parked_waits = 0;
  seer::StepTiming mostly_working = stalled_step(4);
  mostly_working.wait_nanos = 100000ull * 4;
  for (int i = 0; i < 10; ++i) {
    pool.record(short_waits);
    pool.record(mostly_working);
  }
  CHECK(pool.next_threads() == 4, "short waits or a small waiting share are no stall");
  CHECK(!AdaptivePool::stalled(short_waits) && !AdaptivePool::stalled(mostly_working) &&
            AdaptivePool::stalled(stalled_step(2)),
        "stalled()");

  // kStallSteps - 1 stalls, a clean step, more stalls: the count restarts.
  for (unsigned i = 0; i + 1 < AdaptivePool::kStallSteps; ++i) pool.record(stalled_step(4));
  pool.record(clean_step(4));
  for (unsigned i = 0; i + 1 < AdaptivePool::kStallSteps; ++i) pool.record(stalled_step(4));
  CHECK(pool.next_threads() == 4, "stalls must be consecutive");
  pool.record(stalled_step(4));
  CHECK(pool.next_threads() == 2 && pool.reductions() == 1, "halved after kStallSteps stalls");
  CHECK(pool.reason().find("stalled") != std::string::npos,
        "reason says stalled: " + pool.reason());
  for (unsigned i = 0; i < AdaptivePool::kStallSteps; ++i) pool.record(stalled_step(2));
  CHECK(pool.next_threads() == 1 && pool.threads() == 1, "down to one thread");

  // A severe stall sheds at once; the same share with a single parked wait
  // (one late wake-up) is an ordinary stall.
  {
    AdaptivePool fresh(4);
    seer::StepTiming one_park = severe_step(4);
    one_park.parked_waits = 1;
    CHECK(AdaptivePool::stalled(one_park) && !AdaptivePool::severely_stalled(one_park) &&
              AdaptivePool::severely_stalled(severe_step(2)) &&
              !AdaptivePool::severely_stalled(stalled_step(2)),
          "severely_stalled()");
    fresh.record(one_park);
    CHECK(fresh.next_threads() == 4, "one late wake-up does not shed at once");
    fresh.record(severe_step(4));
    CHECK(fresh.next_threads() == 2 && fresh.reductions() == 1,
          "a severe stall after a stall halves at once");
    CHECK(fresh.reason().find("half the step waiting") != std::string::npos,
          "reason says why: " + fresh.reason());
    fresh.record(severe_step(2));
    CHECK(fresh.next_threads() == 2, "one severe stall alone is noise: no shed");
    fresh.record(clean_step(2));
    fresh.record(severe_step(2));
    CHECK(fresh.next_threads() == 2, "severe stalls apart do not shed");
    fresh.record(severe_step(2));
    CHECK(fresh.next_threads() == 1, "two in a row do: down to one");
  }

  // Probes: after kFirstProbeInterval steps on one thread, one step on two.
  unsigned interval = AdaptivePool::kFirstProbeInterval;
  for (int probe = 0; probe < 8; ++probe) {
    for (unsigned i = 0; i < interval; ++i) {
      CHECK(pool.next_threads() == 1, "no probe before the interval");
      pool.record(clean_step(1));
    }
    CHECK(pool.next_threads() == 2, "probe after " + std::to_string(interval) + " steps");
    pool.record(stalled_step(2));  // the machine is still busy
    CHECK(pool.threads() == 1, "a stalled probe keeps the reduced count");
    interval = std::min(AdaptivePool::kMaxProbeInterval, interval * 2);
  }
  CHECK(interval == AdaptivePool::kMaxProbeInterval, "the probe interval is capped");
  for (unsigned i = 0; i < interval; ++i) pool.record(clean_step(1));
  CHECK(pool.next_threads() == 2, "probe at the capped interval");
  pool.record(clean_step(2));
  CHECK(pool.threads() == 2 && pool.restores() == 1, "a clean probe restores");
  CHECK(pool.reason().find("clean") != std::string::npos, "reason says clean: " + pool.reason());
  for (unsigned i = 0; i < AdaptivePool::kFirstProbeInterval; ++i) pool.record(clean_step(2));
  CHECK(pool.next_threads() == 4, "probe interval restarts after a restore");
  pool.record(clean_step(4));
  CHECK(pool.threads() == 4, "back to every thread");

  pool.set_enabled(false);
  for (int i = 0; i < 10; ++i) pool.record(stalled_step(4));
  CHECK(pool.next_threads() == 4, "disabled: every thread");
}

// A one-thread step of `events` events taking `wall` ns, `run` of them not
// waiting for a CPU (0: not measured).
seer::StepTiming serial_step(std::uint64_t wall, std::uint64_t run, std::uint64_t events = 1000) {
  seer::StepTiming t;
  t.threads = 1;
  t.wall_nanos = wall;
  t.run_nanos = run;
  t.events = events;
  t.rounds = 1;
  return t;
}

// Sheds a fresh 2-thread pool to one thread with two severe stalls.
seer::AdaptivePool shed_pool() {
  seer::AdaptivePool pool(2);
  for (unsigned i = 0; i < seer::AdaptivePool::kSevereSteps; ++i) pool.record(severe_step(2));
  return pool;
}

// The speed rules: a stall that still pays is not shed, a probe that beats
// the reduced count restores even though it stalled.
void test_speed_rules() {
  using seer::AdaptivePool;
  {
    AdaptivePool pool = shed_pool();
    CHECK(pool.threads() == 1, "severe stall sheds");
    for (unsigned i = 0; i < AdaptivePool::kFirstProbeInterval; ++i) {
      pool.record(serial_step(2000000, 0));  // 2 us per event
    }
    CHECK(pool.next_threads() == 2, "probe due");
    seer::StepTiming probe = stalled_step(2);  // 1 ms, stalled
    probe.events = 1000;                       // 1 us per event: twice as fast
    pool.record(probe);
    CHECK(pool.threads() == 2 && pool.restores() == 1, "a stalled probe that ran faster restores");
    CHECK(pool.reason().find("beat fewer threads") != std::string::npos,
          "reason says it beat fewer threads: " + pool.reason());
    // Stalled but still faster than one thread was a few steps ago: stays.
    seer::StepTiming stalled_but_fast = severe_step(2);
    stalled_but_fast.events = 1000;
    for (int i = 0; i < 10; ++i) pool.record(stalled_but_fast);
    CHECK(pool.threads() == 2 && pool.reductions() == 1, "a stall that still pays is kept");
    // Once the one-thread figure is old, a stall sheds again.
    for (unsigned i = 0; i < AdaptivePool::kFreshSteps; ++i) pool.record(clean_step(2));
    for (unsigned i = 0; i < AdaptivePool::kSevereSteps; ++i) pool.record(stalled_but_fast);
    CHECK(pool.threads() == 1 && pool.reductions() == 2, "a stale comparison no longer protects");
  }
  {
    // A shed is undone after its check samples (the second and third steps
    // on one thread; the first, which moves the pending events, is not
    // measured) if the stalled steps were faster per event than the faster
    // sample; the same stalls then do not shed again.
    AdaptivePool pool(2);
    seer::StepTiming stalled_fast = severe_step(2);  // 1 ms for 1000 events: 1 us each
    stalled_fast.events = 1000;
    for (int i = 0; i < 5; ++i) pool.record(clean_step(2));
    for (unsigned i = 0; i < AdaptivePool::kSevereSteps; ++i) pool.record(stalled_fast);
    CHECK(pool.threads() == 1 && pool.reductions() == 1, "two severe stalls shed");
    pool.record(serial_step(5000000, 0));  // the layout move: 5 us per event, not counted
    CHECK(pool.threads() == 1, "no verdict on the first one-thread step");
    pool.record(serial_step(50000, 0, 0));  // no events: its cost is per step, no verdict
    CHECK(pool.threads() == 1, "no verdict on a step without events");
    pool.record(serial_step(2000000, 0));  // 2 us per event
    CHECK(pool.threads() == 1, "no verdict on one sample");
    pool.record(serial_step(3000000, 0));  // 3 us per event: the fastest sample counts
    CHECK(pool.threads() == 2 && pool.restores() == 1, "the shed is undone after its samples");
    CHECK(pool.reason().find("shed undone: the stalled steps took 50%") != std::string::npos,
          "reason says so: " + pool.reason());
    for (int i = 0; i < 10; ++i) pool.record(stalled_fast);
    CHECK(pool.threads() == 2 && pool.reductions() == 1, "the same stalls no longer shed");
  }
  {
    // Stalls that were no faster than one thread: the shed stands until a
    // probe; so it does when one of the samples was slow (a step that lost
    // its core), but the other was not.
    AdaptivePool pool(2);
    seer::StepTiming stalled_slow = severe_step(2);
    stalled_slow.events = 500;  // 2 us per event
    for (unsigned i = 0; i < AdaptivePool::kSevereSteps; ++i) pool.record(stalled_slow);
    for (unsigned i = 0; i < AdaptivePool::kFirstProbeInterval; ++i) {
      CHECK(pool.next_threads() == 1, "shed stands: one thread until the probe");
      pool.record(serial_step(i == 1 ? 9000000 : 2000000, 0));  // 2 us per event (one 9 us)
    }
    CHECK(pool.restores() == 0 && pool.next_threads() == 2, "then the probe");
  }
  {
    // A stalled probe slower per event than the serial loop fails.
    AdaptivePool pool = shed_pool();
    for (unsigned i = 0; i < AdaptivePool::kFirstProbeInterval; ++i) {
      pool.record(serial_step(1000000, 0));  // 1 us per event
    }
    seer::StepTiming probe = stalled_step(2);
    probe.events = 500;  // 2 us per event
    pool.record(probe);
    CHECK(pool.threads() == 1, "a stalled, slower probe keeps one thread");
  }
}

// Cheap probes: while the one-thread steps lose their core, due probes are
// skipped (the interval doubles as for a failed one), except at the capped
// interval; once they run unpreempted again, a probe comes within
// kFirstProbeInterval steps whatever the interval grew to.
void test_busy_probes() {
  using seer::AdaptivePool;
  AdaptivePool pool = shed_pool();
  const seer::StepTiming busy = serial_step(1000000, 600000);  // 60% on a CPU
  const seer::StepTiming quiet = serial_step(1000000, 990000);
  CHECK(!AdaptivePool(2).wants_run_delay(), "no run delay read on every thread");
  pool.record(busy);
  CHECK(pool.wants_run_delay(), "run delay read around long one-thread steps");
  // The first probe after a shed runs even while busy (the shed may have been
  // one bad step); it stalls, so later ones are skipped while busy.
  for (unsigned i = 1; i < AdaptivePool::kFirstProbeInterval; ++i) pool.record(busy);
  CHECK(pool.next_threads() == 2 && pool.skipped_probes() == 0, "first probe runs while busy");
  pool.record(stalled_step(2));
  unsigned steps = 1, probes = 0;
  while (steps < 2000 && probes == 0) {
    probes += pool.next_threads() == 2;
    if (probes == 0) pool.record(busy);
    ++steps;
  }
  CHECK(pool.skipped_probes() >= 4, "busy one-thread steps skip probes (" +
                                        std::to_string(pool.skipped_probes()) + " skipped)");
  CHECK(probes == 1 && steps > AdaptivePool::kMaxProbeInterval,
        "the probe at the capped interval runs anyway, after " + std::to_string(steps));
  CHECK(pool.reason().find("probe skipped") != std::string::npos,
        "reason says skipped: " + pool.reason());
  pool.record(stalled_step(2));  // it stalled: interval stays capped
  CHECK(pool.threads() == 1, "stalled probe");
  // Skips again (the interval is capped, so the next due probe would run):
  // make the load go away before it is due.
  AdaptivePool again = shed_pool();
  for (unsigned i = 0; i < AdaptivePool::kFirstProbeInterval; ++i) again.record(busy);
  again.record(stalled_step(2));  // the first probe fails
  for (int i = 0; i < 60; ++i) again.record(busy);  // skips at 16 and 48
  CHECK(again.skipped_probes() >= 2, "skipped under load");
  unsigned until_probe = 0;
  while (again.next_threads() == 1 && until_probe < 100) {
    again.record(quiet);
    ++until_probe;
  }
  CHECK(until_probe <= AdaptivePool::kFirstProbeInterval + 1,
        "after the load went away a probe came in " + std::to_string(until_probe) + " steps");
  again.record(clean_step(2));
  CHECK(again.threads() == 2, "and restored the pool");
  // An unmeasured run delay never skips a probe.
  AdaptivePool unmeasured = shed_pool();
  for (unsigned i = 0; i < AdaptivePool::kFirstProbeInterval; ++i) {
    unmeasured.record(serial_step(1000000, 0));
  }
  CHECK(unmeasured.next_threads() == 2 && unmeasured.skipped_probes() == 0,
        "no run figure: probe on schedule");
  // More threads that were faster per event when last measured are probed
  // on schedule even while busy (their stalls paid).
  {
    AdaptivePool paid(2);
    // 1 ms for 1000 events: no faster than one thread below, so the shed stands.
    seer::StepTiming severe = severe_step(2);
    severe.events = 1000;
    for (unsigned i = 0; i < AdaptivePool::kSevereSteps; ++i) paid.record(severe);
    CHECK(paid.threads() == 1, "severe stalls shed");
    const seer::StepTiming busy = serial_step(1000000, 500000, 1000);  // 1 us per event
    for (unsigned i = 0; i < AdaptivePool::kFirstProbeInterval; ++i) paid.record(busy);
    seer::StepTiming probe = stalled_step(2);  // 1 us per event: not faster, fails
    probe.events = 1000;
    paid.record(probe);
    CHECK(paid.threads() == 1, "probe failed");
    // The load gets heavier: one thread now takes 2 us per event, the last
    // 2-thread step took 1: the next probe runs although busy.
    const seer::StepTiming heavier = serial_step(2000000, 500000, 1000);
    unsigned steps = 0;
    while (paid.next_threads() == 1 && steps < 100) {
      paid.record(heavier);
      ++steps;
    }
    CHECK(paid.skipped_probes() == 0 && steps == 2 * AdaptivePool::kFirstProbeInterval,
          "busy, but 2 threads paid: probe on schedule after " + std::to_string(steps));
  }
  // StepClock: a busy loop's run time is measured (where the system tells
  // the run delay) and at most its wall time.
  seer::StepTiming timed;
  {
    const seer::StepClock clock(true);
    volatile std::uint64_t sink = 0;
    for (std::uint64_t i = 0; i < 3000000; ++i) sink = sink + i;
    clock.stop(timed);
  }
  std::uint64_t delay = 0;
  const bool known = seer::platform::thread_run_delay(delay);
  CHECK(timed.wall_nanos > 0 && (timed.run_nanos > 0) == known &&
            timed.run_nanos <= timed.wall_nanos,
        "StepClock measures the run and wall time");
  // Too short a step for the pool to ask for the run delay.
  seer::AdaptivePool short_steps = shed_pool();
  short_steps.record(serial_step(seer::AdaptivePool::kRunDelayMinNanos - 1, 0));
  CHECK(!short_steps.wants_run_delay(), "no run delay read around short steps");
}

void test_started_reduced() {
  using seer::AdaptivePool;
  AdaptivePool pool(2);
  pool.start_reduced("chosen while the CPUs were busy (CPU pressure 60%)");
  CHECK(pool.threads() == 1 && pool.next_threads() == 1 && pool.reduction_confirmed(),
        "starts on one thread, confirmed (the serial loop)");
  CHECK(pool.reason().find("chosen while the CPUs were busy (CPU pressure 60%)") == 0,
        "reason starts with why: " + pool.reason());
  const seer::StepTiming busy = serial_step(1000000, 600000);
  const seer::StepTiming quiet = serial_step(1000000, 990000);
  for (unsigned i = 0; i < 4 * AdaptivePool::kFirstProbeInterval; ++i) {
    CHECK(pool.next_threads() == 1, "no probe while busy (step " + std::to_string(i) + ")");
    pool.record(busy);
  }
  CHECK(pool.skipped_probes() >= 1, "busy steps skip probes");
  unsigned until_probe = 0;
  while (pool.next_threads() == 1 && until_probe < 100) {
    pool.record(quiet);
    ++until_probe;
  }
  CHECK(until_probe <= AdaptivePool::kFirstProbeInterval + 1,
        "quiet: a probe came in " + std::to_string(until_probe) + " steps");
  pool.record(clean_step(2));
  CHECK(pool.threads() == 2 && !pool.reduction_confirmed(), "a clean probe restores the pool");
  AdaptivePool one(1);
  one.start_reduced("busy");
  CHECK(one.threads() == 1 && !one.reduction_confirmed(), "a pool of one: nothing to reduce");
  AdaptivePool off(2);
  off.set_enabled(false);
  off.start_reduced("busy");
  CHECK(off.threads() == 2 && off.next_threads() == 2, "adaptation off: every thread");
}

// many_events: the env counts as too large to move its events into the
// serial loop's calendar (ParallelEngine::kSerialLoopMaxNodes, lowered to 0
// here): a confirmed shed then stays in rounds on one thread.
void test_engine(bool many_events) {
  const std::map<std::string, double> config = {
      {"num_entities", 64}, {"population", 2}, {"lookahead", 0.25}, {"remote", 0.5}};
  auto make = [&](const char* executor, unsigned threads) {
    seer::SimulationOptions options;
    options.executor = executor;
    options.num_threads = threads;
    return std::make_unique<seer::Simulation>(seer::make_model("phold", seer::Config(config)),
                                              options);
  };
  auto serial = make("serial", 1);
  auto parallel = make("parallel", 2);
  auto& engine = dynamic_cast<seer::ParallelExecutor&>(parallel->executor()).engine();
  if (many_events) engine.set_serial_loop_max_nodes_for_testing(0);
  serial->reset(11);
  parallel->reset(11);
  engine.set_stall_for_testing(1, std::chrono::microseconds(3000));
  bool shed = false;
  int step = 0;
  auto one_step = [&] {
    serial->step(nullptr, nullptr);
    parallel->step(nullptr, nullptr);
    ++step;
    if (parallel->digest() != serial->digest()) {
      FAIL("digest differs from serial after step " + std::to_string(step));
    }
  };
  for (; step < 20 && !shed;) {
    one_step();
    shed = parallel->last_step().threads == 1;
  }
  CHECK(shed, "a stalled worker did not make the env shed threads");
  auto& executor = dynamic_cast<seer::ParallelExecutor&>(parallel->executor());
  // A fresh shed is tentative: the next steps run in rounds on one thread.
  one_step();
  CHECK(parallel->last_step().threads == 1 && !executor.ran_serial_loop() &&
            parallel->last_step().rounds > 1,
        "a tentative shed steps in rounds on one thread");
  CHECK(!engine.adaptive().reduction_confirmed(), "a fresh shed is not confirmed");
  CHECK(executor.thread_decision().find("1 thread: rounds") != std::string::npos,
        "decision names the rounds on one thread: " + executor.thread_decision());
  CHECK(executor.thread_decision().find("stalled") != std::string::npos,
        "decision names the stall: " + executor.thread_decision());
  std::printf("  shed to 1 thread after %d steps: %s\n", step, executor.thread_decision().c_str());
  // Still stalled: the probe stalls too, which confirms the shed; from then
  // on one thread runs the serial executor's loop: one pass, no rounds.
  bool confirmed = false;
  for (int i = 0; i < 4 * static_cast<int>(seer::AdaptivePool::kFirstProbeInterval) && !confirmed;
       ++i) {
    one_step();
    confirmed = many_events ? engine.adaptive().reduction_confirmed() : executor.ran_serial_loop();
  }
  if (many_events) {
    // Confirmed, but too many events to move: rounds on one thread, as before.
    CHECK(confirmed, "a stalled probe did not confirm the shed");
    one_step();
    CHECK(!executor.ran_serial_loop() && parallel->last_step().threads == 1 &&
              parallel->last_step().rounds > 1,
          "a confirmed shed of many events steps in rounds on one thread");
    CHECK(executor.thread_decision().find("too many events to move") != std::string::npos,
          "decision says why there is no serial loop: " + executor.thread_decision());
    std::printf("  many events, confirmed shed: %s\n", executor.thread_decision().c_str());
    engine.set_stall_for_testing(0, std::chrono::microseconds(0));
    for (int i = 0; i < 5; ++i) one_step();
    return;
  }
  CHECK(confirmed, "a stalled probe did not move the env to the serial loop");
  CHECK(engine.adaptive().reduction_confirmed(), "the serial loop runs on a confirmed shed");
  CHECK(parallel->last_step().threads == 1 && parallel->last_step().rounds == 1,
        "the serial loop is one pass on one thread");
  CHECK(executor.thread_decision().find("serial loop") != std::string::npos &&
            executor.thread_decision().find("probe stalled") != std::string::npos,
        "decision names the failed probe and the serial loop: " + executor.thread_decision());
  // Still stalled: probes fail, the env stays on one thread mostly.
  for (int i = 0; i < 12; ++i) one_step();
  engine.set_stall_for_testing(0, std::chrono::microseconds(0));
  // A probe (a step on two threads) must come within the capped-so-far
  // interval. Whether it stays on two depends on the machine: on a busy one
  // the probe stalls for real (the rule itself is checked in test_rule).
  bool probed = false, back = false;
  const int until = step + 2 * static_cast<int>(seer::AdaptivePool::kFirstProbeInterval) * 4;
  while (step < until && !back) {
    one_step();
    probed = probed || parallel->last_step().threads == 2;
    back = engine.adaptive().threads() == 2;
    if (parallel->last_step().threads == 2 && parallel->last_step().parked_waits == 0) {
      CHECK(back, "a probe without parked waits must restore two threads");
    }
  }
  CHECK(probed, "no probe on two threads after the stall ended");
  if (back) {
    one_step();  // restored: this step runs in rounds on the per-entity queues
    CHECK(!executor.ran_serial_loop() && parallel->last_step().threads == 2,
          "restored steps run in rounds, not the serial loop");
    CHECK(executor.thread_decision().find("serial loop") == std::string::npos,
          "a restored pool no longer reports the serial loop: " + executor.thread_decision());
  }
  std::printf("  after the stall: %s at step %d: %s\n", back ? "back to 2 threads" : "still 1",
              step, parallel->executor().thread_decision().c_str());
  for (int i = 0; i < 5; ++i) one_step();
}

// The boundary's pool regions count: a worker late to a parallel_for holds
// up the caller at the region's end; that wait (and the region's wall time)
// joins the next step's timing, with a parked wait for a long one.
void test_boundary_waits() {
  const std::map<std::string, double> config = {
      {"num_entities", 64}, {"population", 2}, {"lookahead", 0.25}, {"remote", 0.5}};
  seer::SimulationOptions options;
  options.executor = "parallel";
  options.num_threads = 2;
  seer::Simulation sim(seer::make_model("phold", seer::Config(config)), options);
  sim.reset(3);
  auto& engine = dynamic_cast<seer::ParallelExecutor&>(sim.executor()).engine();
  engine.set_adaptive(false);  // keep both threads whatever the machine does
  sim.step(nullptr, nullptr);
  const auto caller = std::this_thread::get_id();
  constexpr auto kLate = std::chrono::milliseconds(5);
  // The worker sleeps in the first index it takes; the caller waits until it
  // has taken one (else a fast caller may do every index itself).
  std::atomic<bool> worker_in{false};
  engine.parallel_for(64, [&](std::size_t) {
    if (std::this_thread::get_id() != caller) {
      if (!worker_in.exchange(true)) std::this_thread::sleep_for(kLate);
      return;
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!worker_in.load() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
  });
  CHECK(worker_in.load(), "the worker took part in the region");
  sim.step(nullptr, nullptr);
  const seer::StepTiming& t = engine.last_timing();
  const auto late = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(kLate).count());
  CHECK(t.threads == 2 && t.boundary_nanos >= late, "the region's wall time joins the next step");
  CHECK(t.wait_nanos >= late && t.parked_waits >= 1,
        "the caller's wait for the late worker counts (" + std::to_string(t.wait_nanos) + " ns, " +
            std::to_string(t.parked_waits) + " parked)");
}

// A vector env on one shared engine: shed to one thread, every instance runs
// its own serial loop in turn (ParallelBatchRunner), with each instance's
// digest equal to a serial env's after every step; after the stall a probe
// runs the batch in rounds again.
void test_vector() {
  const std::map<std::string, double> config = {
      {"num_entities", 48}, {"population", 2}, {"lookahead", 0.25}, {"remote", 0.5}};
  constexpr std::size_t kEnvs = 3;
  seer::SimulationOptions parallel;
  parallel.executor = "parallel";
  parallel.num_threads = 2;
  seer::VectorSimulation vec("phold", seer::Config(config), kEnvs, parallel);
  std::vector<std::unique_ptr<seer::Simulation>> refs;
  std::vector<std::uint8_t> modes(kEnvs, seer::VectorSimulation::kReset);
  std::vector<std::uint64_t> seeds = {5, 6, 7};
  for (std::size_t i = 0; i < kEnvs; ++i) {
    seer::SimulationOptions serial;
    refs.push_back(std::make_unique<seer::Simulation>(
        seer::make_model("phold", seer::Config(config)), serial));
    refs[i]->reset(seeds[i]);
  }
  vec.step(nullptr, nullptr, modes.data(), seeds.data());
  std::fill(modes.begin(), modes.end(), seer::VectorSimulation::kStep);
  auto& engine = dynamic_cast<seer::ParallelExecutor&>(vec.at(0).executor()).engine();
  int step = 0;
  bool serial_loop = false, rounds_again = false;
  auto one_step = [&] {
    for (auto& r : refs) r->step(nullptr, nullptr);
    for (const auto& error : vec.step(nullptr, nullptr, modes.data(), seeds.data())) {
      if (error) FAIL("vector step failed at step " + std::to_string(step));
    }
    ++step;
    for (std::size_t i = 0; i < kEnvs; ++i) {
      if (vec.at(i).digest() != refs[i]->digest()) {
        FAIL("instance " + std::to_string(i) + " differs from serial after step " +
             std::to_string(step));
      }
    }
  };
  engine.set_stall_for_testing(1, std::chrono::microseconds(3000));
  bool shed = false;
  for (int i = 0; i < 20 && !shed; ++i) {
    one_step();
    shed = engine.adaptive().threads() == 1;
  }
  CHECK(shed, "a stalled vector env did not shed to one thread");
  one_step();  // tentative: the batch steps in rounds on one thread
  for (std::size_t i = 0; i < kEnvs; ++i) {
    auto& executor = dynamic_cast<seer::ParallelExecutor&>(vec.at(i).executor());
    CHECK(!executor.ran_serial_loop() && vec.at(i).last_step().threads == 1 &&
              vec.at(i).last_step().rounds > 1,
          "every instance steps in rounds on one thread after a fresh shed");
  }
  // The stalled probe confirms the shed: every instance's serial loop in turn.
  for (int i = 0; i < 4 * static_cast<int>(seer::AdaptivePool::kFirstProbeInterval) && !serial_loop;
       ++i) {
    one_step();
    serial_loop = dynamic_cast<seer::ParallelExecutor&>(vec.at(0).executor()).ran_serial_loop();
  }
  CHECK(serial_loop, "a stalled probe did not move the vector env to the serial loops");
  for (std::size_t i = 0; i < kEnvs; ++i) {
    auto& executor = dynamic_cast<seer::ParallelExecutor&>(vec.at(i).executor());
    CHECK(executor.ran_serial_loop() && vec.at(i).last_step().rounds == 1,
          "every instance runs its serial loop on one thread");
  }
  engine.set_stall_for_testing(0, std::chrono::microseconds(0));
  for (int i = 0; i < 40 && !rounds_again; ++i) {
    one_step();
    rounds_again = vec.at(0).last_step().threads == 2;
  }
  CHECK(rounds_again, "no probe in rounds after the stall ended");
  for (int i = 0; i < 5; ++i) one_step();
  std::printf("  vector env: rounds on one thread, serial loops once confirmed, rounds on the probe; "
              "%d steps\n",
              step);
}

}  // namespace

int main() {
  seer::register_builtin_models();
  test_rule();
  test_speed_rules();
  test_busy_probes();
  test_started_reduced();
  test_engine(false);
  test_engine(true);
  test_boundary_waits();
  test_vector();
  return check::report("test_adaptive_pool");
}
