// Parking a thread on a 32-bit atomic word (C++17 has no std::atomic::wait):
// the Linux futex system call, or platform.hpp's portable fallback (a
// condition variable) elsewhere and in a SEER_PORTABLE build. Both are
// reached only after a wait spun and yielded (staged_wait.hpp), so the call
// is out of line.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "platform.hpp"

namespace seer {

// Sleeps while `word` holds `expected`, at most `timeout` (spurious returns
// happen: callers loop on their condition). Comparing the word and going to
// sleep are atomic with respect to futex_wake_all(), so a store plus
// futex_wake_all() before it cannot be missed. Thread-safe; blocks; does not
// allocate.
inline void futex_wait(const std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) {
  platform::park(word, expected, timeout);
}

// Wakes every thread in futex_wait() on `word`. Thread-safe; does not block
// for long (a system call); does not allocate.
inline void futex_wake_all(std::atomic<std::uint32_t>& word) { platform::wake_all(word); }

}  // namespace seer
