// Stress test of ThreadPool (persistent workers, spin-then-park, caller
// participates) and SpinBarrier (reusable, on_last runs alone).
//
//  1. Thousands of run() calls with pool sizes 1..8: every participant index
//     runs exactly once per run, index 0 on the caller, on distinct threads;
//     the caller's plain writes before run() are seen by every participant
//     and their plain writes are seen by the caller after run() (TSAN checks
//     the happens-before too).
//  2. Runs separated by sleeps longer than the spin window (workers park and
//     must be woken) and by sleeps around it (the spin/park boundary).
//  3. Uneven jobs (one slow participant) so the others finish and spin.
//  4. Pool destruction: never run, right after a run (workers spinning), and
//     after a long sleep (workers parked).
//  5. SpinBarrier reuse over many generations: on_last's side effects are
//     visible to all participants after the barrier.
//  6. (Not under TSAN, which does not support threads after fork.) fork():
//     the child's pool starts fresh workers; the parent's keeps working;
//     prewake() in the child before its first run() is a no-op.
//  7. prewake(): before the first run (no workers: a no-op), while workers
//     are parked (they wake and spin; the next run is correct), while they
//     spin, and repeatedly with no run in between (they park again).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "check.hpp"
#include "spin_barrier.hpp"
#include "thread_pool.hpp"

#if defined(__SANITIZE_THREAD__)
#define SEER_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SEER_TEST_TSAN 1
#endif
#endif

namespace {

void sleep_us(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

constexpr unsigned kMaxThreads = 8;

// Plain (non-atomic) per-participant slots, padded so that participants do
// not share cache lines: visibility must come from run()'s synchronization.
struct alignas(64) Slot {
  std::uint64_t hits = 0;      // times this index ran
  std::uint64_t seen = 0;      // the caller's `input` as seen by this index
  std::thread::id thread;      // who ran it this time
};

// One run(): checks participation and visibility both ways.
void checked_run(seer::ThreadPool& pool, Slot* slots, std::uint64_t& input,
                 std::uint64_t run_no, bool uneven) {
  const unsigned n = pool.size();
  input = run_no * 7 + 3;  // plain write before run(): workers must see it
  const std::uint64_t* in = &input;
  std::function<void(unsigned)> job = [&](unsigned i) {
    if (i >= n) {
      FAIL("participant index out of range", i, n);
      return;
    }
    if (uneven && i == run_no % n) sleep_us(50);  // one slow participant
    ++slots[i].hits;
    slots[i].seen = *in;
    slots[i].thread = std::this_thread::get_id();
  };
  pool.run(job);
  for (unsigned i = 0; i < n; ++i) {
    if (slots[i].hits != run_no + 1) FAIL("participant did not run exactly once", i, run_no);
    if (slots[i].seen != input) FAIL("participant missed the caller's write", i, run_no);
    for (unsigned j = 0; j < i; ++j) {
      if (slots[i].thread == slots[j].thread) FAIL("two participants on one thread", i, j);
    }
  }
  if (slots[0].thread != std::this_thread::get_id()) FAIL("index 0 not on the caller", run_no);
}

void test_many_runs() {
  std::mt19937_64 rng(12345);
  for (unsigned size = 1; size <= kMaxThreads; ++size) {
    seer::ThreadPool pool(size);
    if (pool.size() != size) FAIL("size()", pool.size(), size);
    Slot slots[kMaxThreads];
    std::uint64_t input = 0;
    const std::uint64_t runs = 300;
    for (std::uint64_t r = 0; r < runs; ++r) {
      // Mostly back-to-back (workers still spinning); sometimes a sleep past
      // the spin window (parked), or right around it (the boundary race).
      const unsigned pick = static_cast<unsigned>(rng() % 16);
      if (pick == 0) {
        sleep_us(seer::ThreadPool::kSpinMicros * 3);
      } else if (pick == 1) {
        sleep_us(static_cast<int>(rng() % (2 * seer::ThreadPool::kSpinMicros)));
      }
      checked_run(pool, slots, input, r, /*uneven=*/pick == 2);
    }
  }
  // size 0 is clamped to 1.
  seer::ThreadPool zero(0);
  if (zero.size() != 1) FAIL("ThreadPool(0).size() != 1", zero.size());
}

void test_parked_wakeups() {
  // Every run after a sleep well past the spin window: all workers parked.
  for (unsigned size : {2u, 4u, 8u}) {
    seer::ThreadPool pool(size);
    Slot slots[kMaxThreads];
    std::uint64_t input = 0;
    for (std::uint64_t r = 0; r < 60; ++r) {
      sleep_us(seer::ThreadPool::kSpinMicros * 4);
      checked_run(pool, slots, input, r, false);
    }
  }
}

void test_prewake() {
  for (unsigned size : {2u, 4u}) {
    seer::ThreadPool pool(size);
    pool.prewake();  // no workers yet
    Slot slots[kMaxThreads];
    std::uint64_t input = 0;
    for (std::uint64_t r = 0; r < 40; ++r) {
      sleep_us(seer::ThreadPool::kSpinMicros * 3);  // parked
      pool.prewake();
      if (r % 3 == 1) pool.prewake();  // twice in a row
      if (r % 3 == 2) sleep_us(seer::ThreadPool::kSpinMicros);  // woken, still spinning
      checked_run(pool, slots, input, r, false);
      pool.prewake();  // workers still spinning from the run
    }
    // Nudged with no run: they spin the longer window, park again, and a
    // run after that still works.
    for (int i = 0; i < 3; ++i) {
      pool.prewake();
      sleep_us(seer::ThreadPool::kPrewakeSpinMicros * 2);
    }
    checked_run(pool, slots, input, 40, false);  // the 41st run
  }
}

void test_destruction() {
  for (int i = 0; i < 40; ++i) {
    const unsigned size = 2 + i % 7;
    { seer::ThreadPool never_run(size); }
    {
      seer::ThreadPool spinning(size);
      std::atomic<unsigned> ran{0};
      spinning.run([&](unsigned) { ran.fetch_add(1, std::memory_order_relaxed); });
      if (ran.load() != size) FAIL("run() before destruction", ran.load(), size);
    }  // destroyed while its workers spin
    {
      seer::ThreadPool parked(size);
      std::atomic<unsigned> ran{0};
      parked.run([&](unsigned) { ran.fetch_add(1, std::memory_order_relaxed); });
      if (i % 4 == 0) sleep_us(seer::ThreadPool::kSpinMicros * 5);  // parked
      else sleep_us(seer::ThreadPool::kSpinMicros);  // about the park moment
    }
  }
}

void test_spin_barrier() {
  for (unsigned size : {2u, 3u, 4u, 8u}) {
    seer::ThreadPool pool(size);
    seer::SpinBarrier barrier(size);
    const std::uint64_t generations = size == 8 ? 400 : 1000;
    std::uint64_t slot[kMaxThreads] = {};  // plain, written before each barrier
    std::uint64_t sum = 0;                 // plain, written by on_last
    std::uint64_t last_runs = 0;           // plain, counts on_last calls
    std::atomic<unsigned> bad{0};
    pool.run([&](unsigned i) {
      for (std::uint64_t g = 0; g < generations; ++g) {
        slot[i] = g * 100 + i;
        barrier.arrive_and_wait([&] {
          std::uint64_t s = 0;
          for (unsigned j = 0; j < size; ++j) s += slot[j];
          sum = s;
          ++last_runs;
        });
        // After the barrier: on_last's writes are visible to everyone. The
        // next on_last cannot run before this thread arrives again.
        const std::uint64_t expect = g * 100 * size + size * (size - 1) / 2;
        if (sum != expect || last_runs != g + 1) bad.fetch_add(1, std::memory_order_relaxed);
      }
      barrier.arrive_and_wait();  // the plain overload too
    });
    if (bad.load() != 0) FAIL("SpinBarrier: on_last effects not visible", size, bad.load());
    if (last_runs != generations) FAIL("SpinBarrier: on_last count", last_runs, generations);
  }
}

#if !defined(SEER_TEST_TSAN)
void test_fork() {
  seer::ThreadPool pool(3);
  std::atomic<unsigned> ran{0};
  auto count = [&](unsigned) { ran.fetch_add(1, std::memory_order_relaxed); };
  pool.run(count);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    FAIL("fork() failed");
    return;
  }
  if (child == 0) {
    // The parent's workers do not exist here: prewake() must not touch
    // them, run() must start new ones.
    pool.prewake();
    ran.store(0);
    for (int i = 0; i < 20; ++i) pool.run(count);
    ::_exit(ran.load() == 60 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) FAIL("pool in a forked child", status);
  ran.store(0);
  pool.run(count);
  if (ran.load() != 3) FAIL("parent pool after fork()", ran.load());
}
#endif

}  // namespace

int main() {
  const auto start = std::chrono::steady_clock::now();
  auto timed = [](const char* name, void (*fn)()) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    std::printf("  %-16s %.2f s\n", name,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  };
  timed("many runs", test_many_runs);
  timed("parked wake-ups", test_parked_wakeups);
  timed("prewake", test_prewake);
  timed("destruction", test_destruction);
  timed("spin barrier", test_spin_barrier);
#if !defined(SEER_TEST_TSAN)
  test_fork();
#endif
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("test_thread_pool: %.2f s\n", secs);
  return check::report("test_thread_pool");
}
