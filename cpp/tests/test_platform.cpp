// The platform layer (platform.hpp), whichever implementation this build has
// (the Linux calls, or the portable fallbacks under -DSEER_PORTABLE=ON):
//  1. the build uses the implementation it was configured for;
//  2. usable CPUs and available memory are plausible (the fallback's CPU
//     count is the hardware's);
//  3. park() returns at once when the word already differs, and after about
//     its timeout when nobody wakes it;
//  4. wake_all() wakes a parked thread long before a 10 s timeout, and two
//     threads handing a word back and forth 2000 times through park/wake
//     finish in bounded time (a lost wake-up would cost the 10 s timeout).
// A watchdog fails the test if a case runs past its deadline.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

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
  end_cases();

  return check::report("test_platform");
}
