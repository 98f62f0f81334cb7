// Waiting for a 32-bit word to change: spin, then yield, then park (futex).
//
// Why these stages and budgets (docs/runtime.md, "Waiting under contention";
// measured on 2-vCPU machines): a spin barrier round trip is 0.1-0.5 us, a
// futex wake round trip 13-57 us. Spinning for as long as parking would cost
// and parking after that is the classic 2-competitive rule: a wait never
// costs more than twice the best choice made in hindsight. So a waiter spins up to kSpinNanos (the top
// of the measured wake cost: on a quiet machine a round's waits are far
// shorter and never reach the futex), then yields up to kYieldNanos (cheap
// for the waker, and it hands the core to a preempted peer of ours when
// threads outnumber cores), then parks. A peer that lost its core for a whole
// time slice (milliseconds) therefore costs each waiter about 0.1 ms of CPU
// and a wake-up, not the slice. When the team is larger than the machine's
// hardware threads, spinning only keeps the awaited peer off a core: the
// budget skips the spin stage (oversubscribed()).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "futex.hpp"
#include "spin_wait.hpp"

namespace seer {

// How long each stage of a wait may last. A value type; thread-safe to copy.
struct WaitBudget {
  static constexpr std::int64_t kSpinNanos = 50000;
  static constexpr std::int64_t kYieldNanos = 50000;
  // A parked waiter re-checks at least this often: a guard against a lost
  // wake-up, never the way waiters normally wake.
  static constexpr std::int64_t kParkTimeoutNanos = 20000000;
  std::int64_t spin_nanos = kSpinNanos;
  std::int64_t yield_nanos = kYieldNanos;

  // The budget for a team of `threads`: no spinning when the team is
  // larger than the hardware threads. Thread-safe.
  static WaitBudget for_team(unsigned threads) {
    WaitBudget b;
    const unsigned cores = std::thread::hardware_concurrency();
    if (cores != 0 && threads > cores) b.spin_nanos = 0;
    return b;
  }
};

// The stage a wait ended in (for statistics: how often rounds stalled).
enum class WaitStage : std::uint8_t { kSpin, kYield, kPark };

// Blocks until `word` differs from `old`; returns the stage it reached.
// `sleepers` counts parked waiters so that the changer can skip the wake-up
// system call when none is parked (see notify_changed). The read that ends
// the wait is an acquire, so it pairs with the changer's store. Thread-safe;
// blocks; does not allocate.
inline WaitStage wait_for_change(const std::atomic<std::uint32_t>& word, std::uint32_t old,
                                 std::atomic<std::uint32_t>& sleepers, const WaitBudget& budget) {
  using Clock = std::chrono::steady_clock;
  // acquire (every check below): pairs with the changer's release/seq_cst store.
  // A quiet round ends within a few hundred nanoseconds: the first pauses
  // go without a clock read (~20 ns each).
  for (int i = 0; i < 64; ++i) {
    if (word.load(std::memory_order_acquire) != old) return WaitStage::kSpin;
    if (budget.spin_nanos != 0) cpu_relax();
  }
  const Clock::time_point start = Clock::now();
  const auto spin_end = start + std::chrono::nanoseconds(budget.spin_nanos);
  // Reading the clock costs ~20 ns: check it every 64 pauses.
  while (Clock::now() < spin_end) {
    for (int i = 0; i < 64; ++i) {
      if (word.load(std::memory_order_acquire) != old) return WaitStage::kSpin;
      cpu_relax();
    }
  }
  const auto yield_end = Clock::now() + std::chrono::nanoseconds(budget.yield_nanos);
  do {
    if (word.load(std::memory_order_acquire) != old) return WaitStage::kYield;
    std::this_thread::yield();
  } while (Clock::now() < yield_end);
  // seq_cst: with notify_changed's seq_cst store and load (Dekker), either the
  // changer sees us counted and wakes us, or the kernel's compare in
  // futex_wait sees the new value and does not sleep.
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  while (word.load(std::memory_order_seq_cst) == old) {
    futex_wait(word, old, std::chrono::nanoseconds(WaitBudget::kParkTimeoutNanos));
  }
  // (The loop's last load, seq_cst, is an acquire: it pairs with the store.)
  // relaxed: a stale count only costs the changer a needless wake call.
  sleepers.fetch_sub(1, std::memory_order_relaxed);
  return WaitStage::kPark;
}

// Stores `value` in `word` (release and more: seq_cst, for the Dekker pair
// with wait_for_change) and wakes the parked waiters, if any. Thread-safe;
// does not block (one system call when someone is parked); does not allocate.
inline void notify_changed(std::atomic<std::uint32_t>& word, std::uint32_t value,
                           std::atomic<std::uint32_t>& sleepers) {
  word.store(value, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(word);
}

}  // namespace seer
