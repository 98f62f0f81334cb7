// Waiting without parking: spin with a CPU pause, then yield the core.
//
// Yielding matters when there are more threads than cores (tests run 16
// threads on 2 cores): a pure spinner would wait a whole scheduler quantum
// for a descheduled peer.
#pragma once

#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace seer {

// A pause hint to the core (lets a hyper-thread sibling run). Thread-safe;
// does not block or allocate.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Call in a loop while a condition is false. Spins for the first `kSpins`
// calls, then yields to the scheduler. One per waiting thread (a local):
// not thread-safe; nothing allocates.
class SpinWait {
 public:
  static constexpr unsigned kSpins = 2000;
  // Waits a little: a pause, or a sched_yield once spinning has gone on
  // long enough (may block for a scheduler quantum then).
  void once() {
    if (count_ < kSpins) {
      ++count_;
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  // Starts over with spinning (after the condition became true once).
  void reset() { count_ = 0; }

 private:
  unsigned count_ = 0;
};

}  // namespace seer
