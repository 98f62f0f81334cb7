// A reusable barrier for the threads of one parallel region. Never parks:
// rounds of one step are microseconds apart (DESIGN.md 4b).
#pragma once

#include <atomic>
#include <cstddef>

#include "seer/spin_wait.hpp"

namespace seer {

class SpinBarrier {
 public:
  explicit SpinBarrier(unsigned participants) : participants_(participants) {}

  // Blocks until all participants arrived. The last to arrive runs
  // `on_last()` before releasing the others, so its writes are visible to
  // everyone after the barrier. Thread-safe; does not allocate.
  template <class Fn>
  void arrive_and_wait(Fn&& on_last) {
    // acquire: read the generation before counting ourselves in.
    const unsigned generation = generation_.load(std::memory_order_acquire);
    // acq_rel: our prior writes are visible to the last arriver, and the
    // last arriver sees everyone's writes.
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == participants_) {
      on_last();
      arrived_.store(0, std::memory_order_relaxed);
      // release: on_last()'s writes and the reset count before the new generation.
      generation_.store(generation + 1, std::memory_order_release);
      return;
    }
    SpinWait wait;
    while (generation_.load(std::memory_order_acquire) == generation) wait.once();
  }
  void arrive_and_wait() {
    arrive_and_wait([] {});
  }

 private:
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<unsigned> generation_{0};
  const unsigned participants_;
};

}  // namespace seer
