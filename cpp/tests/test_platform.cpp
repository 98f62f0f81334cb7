// The platform layer (platform.hpp), whichever implementation this build has
// (the Linux calls, or the portable fallbacks under -DSEER_PORTABLE=ON):
//  1. the build uses the implementation it was configured for;
//  2. usable CPUs and available memory are plausible (the fallback's CPU
//     count is the hardware's);
//  3. park() returns at once when the word already differs, and after about
//     its timeout when nobody wakes it;
//  4. wake_all() wakes a parked thread long before a 10 s timeout, and two
//     threads handing a word back and forth 2000 times through park/wake
//     finish in bounded time (a lost wake-up would cost the 10 s timeout);
//  5. thread_run_delay(): unknown in the fallbacks; on Linux it grows by
//     about half the time a thread shares its CPU with a spinning one, and a
//     forked child reads its own thread's (not the parent's);
//  6. discard_pages(): on Linux the whole pages inside the range read zero
//     afterwards and the bytes around them are kept; the fallback changes
//     nothing.
// A watchdog fails the test if a case runs past its deadline.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__) && !defined(SEER_PORTABLE)
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "case_watchdog.hpp"
#include "check.hpp"
#include "platform.hpp"

namespace {

using seer_test::end_cases;
using seer_test::now_s;
using seer_test::start_case;
using seer_test::start_watchdog;
namespace platform = seer::platform;

constexpr auto kLongTimeout = std::chrono::seconds(10);

// Parks until `word` differs from `old` (spurious returns loop).
void wait_until_changed(const std::atomic<std::uint32_t>& word, std::uint32_t old) {
  while (word.load(std::memory_order_seq_cst) == old) platform::park(word, old, kLongTimeout);
}

#if defined(__linux__) && !defined(SEER_PORTABLE)
// Keeps the calling thread on one CPU (the first in `allowed`).
void pin_to_one_cpu(const cpu_set_t& allowed) {
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &allowed)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) FAIL("could not pin a thread to one CPU");
}

// 5. on Linux: the run delay of a thread that shares its CPU.
void check_run_delay() {
  start_case("run delay", 60.0);
  std::uint64_t before = 0, after = 0;
  if (!platform::thread_run_delay(before)) {
    std::printf("  run delay: unknown (no /proc/thread-self/schedstat); not checked\n");
    return;
  }
  // This thread and a spinning one on one CPU for 0.2 s: each waits about half.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof allowed, &allowed);
  pin_to_one_cpu(allowed);
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    pin_to_one_cpu(allowed);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  const double until = now_s() + 0.2;
  while (now_s() < until) {
  }
  stop.store(true);
  spinner.join();
  sched_setaffinity(0, sizeof allowed, &allowed);
  if (!platform::thread_run_delay(after)) FAIL("run delay unknown after sharing a CPU");
  const double waited = static_cast<double>(after - before) / 1e9;
  std::printf("  run delay while sharing a CPU for 0.2 s: %.3f s\n", waited);
  if (after < before || waited < 0.03) {
    FAIL("a thread sharing its CPU waited only " + std::to_string(waited) + " s");
  }
  // A forked child reads its own thread (fresh: hardly any delay), not this one.
  const pid_t child = fork();
  if (child == 0) {
    std::uint64_t mine = 0;
    if (!platform::thread_run_delay(mine)) _exit(3);
    _exit(mine < after - before ? 0 : 4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    FAIL("a forked child read the parent's run delay or none (exit " +
         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
}
#endif

}  // namespace

int main() {
  start_watchdog();

  // 1. The configured implementation.
#if defined(SEER_PORTABLE) || !defined(__linux__)
  const bool expect_portable = true;
#else
  const bool expect_portable = false;
#endif
  if (platform::portable() != expect_portable) FAIL("the build uses the other platform layer");
  std::printf("  platform layer: %s\n", platform::portable() ? "portable fallbacks" : "Linux");

  // 2. CPUs and memory.
  const unsigned cpus = platform::usable_cpus();
  const unsigned hardware = std::thread::hardware_concurrency();
  if (cpus < 1) FAIL("usable_cpus() < 1");
  if (hardware != 0 && cpus > hardware) FAIL("more usable CPUs than hardware threads");
  if (platform::portable() && hardware != 0 && cpus != hardware) {
    FAIL("the fallback's CPU count is not hardware_concurrency()");
  }
  const std::uint64_t memory = platform::available_memory_bytes();
  if (memory == 0 || memory < (std::uint64_t{1} << 20)) FAIL("less than 1 MiB available");
  std::printf("  %u usable CPUs, %llu MB available\n", cpus,
              static_cast<unsigned long long>(memory / 1000000));

  // 3. park() without a wake-up.
  {
    start_case("park without wake", 30.0);
    std::atomic<std::uint32_t> word{7};
    double t0 = now_s();
    platform::park(word, 6, kLongTimeout);  // differs: returns at once
    if (now_s() - t0 > 1.0) FAIL("park() slept on a word that differs");
    t0 = now_s();
    platform::park(word, 7, std::chrono::milliseconds(20));
    const double slept = now_s() - t0;
    if (slept > 5.0) FAIL("park() ignored its timeout: " + std::to_string(slept) + " s");
  }

  // 4. wake_all(): one wake-up, then a hand-off back and forth.
  {
    start_case("wake", 60.0);
    std::atomic<std::uint32_t> word{0};
    const double t0 = now_s();
    std::thread waiter([&] { wait_until_changed(word, 0); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it park
    word.store(1, std::memory_order_seq_cst);
    platform::wake_all(word);
    waiter.join();
    if (now_s() - t0 > 5.0) FAIL("a parked thread was not woken");
  }
  {
    start_case("hand-off", 120.0);
    constexpr std::uint32_t kRounds = 2000;
    std::atomic<std::uint32_t> turn{0};  // even: main's turn, odd: the peer's
    const double t0 = now_s();
    std::thread peer([&] {
      for (std::uint32_t r = 1; r < 2 * kRounds; r += 2) {
        wait_until_changed(turn, r - 1);
        turn.store(r + 1, std::memory_order_seq_cst);
        platform::wake_all(turn);
      }
    });
    for (std::uint32_t r = 0; r < 2 * kRounds; r += 2) {
      turn.store(r + 1, std::memory_order_seq_cst);
      platform::wake_all(turn);
      wait_until_changed(turn, r + 1);
    }
    peer.join();
    const double seconds = now_s() - t0;
    if (turn.load() != 2 * kRounds) FAIL("hand-off ended at the wrong turn");
    if (seconds > 60.0) FAIL("hand-off took " + std::to_string(seconds) + " s");
    std::printf("  %u hand-offs through park/wake: %.3f s\n", kRounds, seconds);
  }

  // 5. The run delay.
#if defined(__linux__) && !defined(SEER_PORTABLE)
  check_run_delay();
#else
  std::uint64_t delay = 0;
  if (platform::thread_run_delay(delay)) FAIL("the fallback claims to know a run delay");
#endif

  // 6. Pages given back.
  {
#if defined(__linux__) && !defined(SEER_PORTABLE)
    const auto kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
#else
    const std::size_t kPage = 4096;
#endif
    constexpr std::size_t kPages = 16;
    std::vector<unsigned char> buffer(kPages * kPage + kPage, 0xAB);
    unsigned char* base = buffer.data();
    const std::size_t skip = 100;  // not page-aligned at either end
    const std::size_t bytes = 8 * kPage;
    platform::discard_pages(base + skip, bytes);
    std::size_t zeros = 0, changed_outside = 0;
    const auto page_of = [&](std::size_t i) {
      return reinterpret_cast<std::uintptr_t>(base + i) / kPage;
    };
    for (std::size_t i = 0; i < buffer.size(); ++i) {
      const bool whole_page_inside = page_of(i) > page_of(skip - 1) &&
                                     page_of(i) < page_of(skip + bytes);
      if (buffer[i] == 0) ++zeros;
      if (!whole_page_inside && buffer[i] != 0xAB) ++changed_outside;
    }
    if (changed_outside != 0) FAIL("discard_pages changed bytes outside its whole pages");
    const std::size_t expect = platform::portable() ? 0 : 7 * kPage;
    if (zeros != expect) {
      FAIL("discard_pages: zeroed bytes, expected", static_cast<unsigned long long>(zeros),
           static_cast<unsigned long long>(expect));
    }
  }
  end_cases();

  return check::report("test_platform");
}
