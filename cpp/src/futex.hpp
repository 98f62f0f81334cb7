// Parking a thread on a 32-bit atomic word: the Linux futex system call
// (C++17 has no std::atomic::wait). Elsewhere a short sleep stands in, which
// is correct (callers re-check the word) but slower to wake.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

namespace seer {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "a futex is a plain 32-bit word");

// Sleeps while `word` holds `expected`, at most `timeout` (spurious returns
// happen: callers loop on their condition). The kernel compares the word
// atomically with going to sleep, so a store plus futex_wake_all() before it
// cannot be missed. Thread-safe; blocks; does not allocate.
inline void futex_wait(const std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) {
#if defined(__linux__)
  const auto ns = timeout.count();
  struct timespec ts {};
  ts.tv_sec = static_cast<time_t>(ns / 1000000000);
  ts.tv_nsec = static_cast<long>(ns % 1000000000);
  syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE,
          expected, &ts, nullptr, 0);
#else
  // relaxed: only decides whether to sleep; the caller re-reads with acquire.
  if (word.load(std::memory_order_relaxed) == expected) {
    std::this_thread::sleep_for(std::min(timeout, std::chrono::nanoseconds(50000)));
  }
#endif
}

// Wakes every thread in futex_wait() on `word`. Thread-safe; does not block
// (a system call); does not allocate.
inline void futex_wake_all(std::atomic<std::uint32_t>& word) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX,
          nullptr, nullptr, 0);
#else
  (void)word;
#endif
}

}  // namespace seer
