// Stress test of RoundBarrier (spin, yield, then park on a futex):
//
//  1. Reuse over many generations at 2, 3, 8 and 16 threads (16 is more
//     threads than this machine's cores: the oversubscribed budget, no spin):
//     on_last runs once per generation, alone, and its writes are visible to
//     every participant after the barrier (TSAN checks the happens-before).
//  2. A late participant (sleeps 3 ms before arriving, far past the spin plus
//     yield budget): the others' waits reach the park stage, and they all
//     leave promptly once it arrives (a lost wake-up would cost the 20 ms
//     park timeout each time: bounded total time).
//  3. Park-only budget (no spin, no yield): every wait parks; thousands of
//     generations at 4 threads finish in bounded time (no lost wake-ups).
//  4. set_participants() between regions: the same barrier serves 4, then
//     2, then 1, then 3 threads.
// A watchdog fails the test if a case runs past its deadline.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "case_watchdog.hpp"
#include "check.hpp"
#include "round_barrier.hpp"

#if defined(__SANITIZE_THREAD__)
#define SEER_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SEER_TEST_TSAN 1
#endif
#endif

namespace {

using seer_test::end_cases;
using seer_test::now_s;
using seer_test::start_case;
using seer_test::start_watchdog;

// TSAN slows every atomic access and futex round trip ~30x: fewer generations.
#if defined(SEER_TEST_TSAN)
constexpr unsigned kReuseGenerations = 300;
#else
constexpr unsigned kReuseGenerations = 3000;
#endif

struct Outcome {
  std::uint64_t parked = 0;  // waits that reached the park stage
  double seconds = 0;
};

// `threads` threads pass `generations` barriers. on_last writes a plain
// counter that every participant must then read; `late(g, i)` says whether
// participant i sleeps `late_us` before arriving at generation g.
template <class Late>
Outcome run_barrier(seer::RoundBarrier& barrier, unsigned threads, unsigned generations,
                    Late late, int late_us) {
  std::uint64_t shared_value = 0;  // plain: only on_last writes it
  unsigned last_runs = 0;
  std::atomic<std::uint64_t> parked{0};
  std::atomic<unsigned> bad{0};
  const double t0 = now_s();
  auto body = [&](unsigned i) {
    std::uint64_t my_parks = 0;
    for (unsigned g = 0; g < generations; ++g) {
      if (late(g, i)) std::this_thread::sleep_for(std::chrono::microseconds(late_us));
      const seer::WaitStage stage = barrier.arrive_and_wait([&] {
        shared_value = g + 1;
        ++last_runs;
      });
      if (stage == seer::WaitStage::kPark) ++my_parks;
      if (shared_value != g + 1) bad.fetch_add(1);
      // A second barrier so that nobody's next on_last overwrites
      // shared_value before everyone checked it.
      barrier.arrive_and_wait();
    }
    parked.fetch_add(my_parks);
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(body, i);
  body(0);
  for (auto& t : pool) t.join();
  if (bad.load() != 0) FAIL("on_last's write not visible after the barrier");
  if (last_runs != generations) FAIL("on_last ran " + std::to_string(last_runs) + " times");
  return {parked.load(), now_s() - t0};
}

}  // namespace

int main() {
  start_watchdog();
  const unsigned cores = std::thread::hardware_concurrency();

  // 1. Reuse at several team sizes, oversubscribed included.
  for (unsigned threads : {2u, 3u, 8u, 16u}) {
    start_case("reuse", 120.0);
    seer::RoundBarrier barrier(threads);
    const bool oversubscribed = cores != 0 && threads > cores;
    if (oversubscribed != (barrier.budget().spin_nanos == 0)) {
      FAIL("spin budget for " + std::to_string(threads) + " threads on " + std::to_string(cores) +
           " cores");
    }
    const Outcome o = run_barrier(barrier, threads, kReuseGenerations,
                                  [](unsigned, unsigned) { return false; }, 0);
    std::printf("  reuse %2u threads: %.2fs, %llu parked waits\n", threads, o.seconds,
                static_cast<unsigned long long>(o.parked));
  }

  // 2. A late participant: the others park and are woken promptly.
  {
    start_case("late participant", 120.0);
    constexpr unsigned kThreads = 3, kGenerations = 200;
    constexpr int kLateUs = 3000;
    seer::RoundBarrier barrier(kThreads);
    const Outcome o = run_barrier(
        barrier, kThreads, kGenerations,
        [](unsigned g, unsigned i) { return i == g % kThreads && g % 4 == 0; }, kLateUs);
    const unsigned late_generations = kGenerations / 4;
    // Each late generation leaves kThreads - 1 waiters well past the budget.
    if (o.parked < late_generations) {
      FAIL("late participant: only " + std::to_string(o.parked) + " parked waits");
    }
    // 50 sleeps of 3 ms are 0.15 s; lost wake-ups would add 20 ms each.
    const double budget = late_generations * (kLateUs * 1e-6) + 0.02 * late_generations / 2 + 5.0;
    if (o.seconds > budget) FAIL("late participant: " + std::to_string(o.seconds) + " s");
    std::printf("  late participant: %.2fs, %llu parked waits\n", o.seconds,
                static_cast<unsigned long long>(o.parked));
  }

  // 3. Park-only: every wait parks; no lost wake-ups.
  {
    start_case("park only", 120.0);
    constexpr unsigned kThreads = 4, kGenerations = 3000;
    seer::RoundBarrier barrier(kThreads);
    seer::WaitBudget park_only;
    park_only.spin_nanos = 0;
    park_only.yield_nanos = 0;
    barrier.set_budget(park_only);
    const Outcome o = run_barrier(barrier, kThreads, kGenerations,
                                  [](unsigned, unsigned) { return false; }, 0);
    if (o.parked == 0) FAIL("park only: no wait parked");
    std::printf("  park only: %.2fs, %llu parked waits\n", o.seconds,
                static_cast<unsigned long long>(o.parked));
  }

  // 4. The team size changes between regions.
  {
    start_case("set_participants", 60.0);
    seer::RoundBarrier barrier(4);
    for (unsigned threads : {4u, 2u, 1u, 3u}) {
      barrier.set_participants(threads);
      if (barrier.participants() != threads) FAIL("participants()");
      run_barrier(barrier, threads, 500, [](unsigned, unsigned) { return false; }, 0);
    }
  }

  end_cases();
  return check::report("test_round_barrier");
}
