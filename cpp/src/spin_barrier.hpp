// A reusable barrier for the threads of one parallel region. Never parks:
// rounds of one step are microseconds apart (docs/runtime.md, "Waiting under
// contention").
#pragma once

#include <atomic>
#include <cstddef>

#include "spin_wait.hpp"

namespace seer {

// Layout: arrived_ (every arriver's fetch_add) and generation_ (what the
// waiters spin on) each start their own cache line, so spinning waiters do
// not slow down the arrivals; participants_ is read-only beside generation_.
class alignas(64) SpinBarrier {
 public:
  // Not thread-safe; does not allocate.
  explicit SpinBarrier(unsigned participants) : participants_(participants) {
    static_assert(offsetof(SpinBarrier, arrived_) == 0, "arrived_ starts the first line");
    static_assert(offsetof(SpinBarrier, generation_) == 64, "generation_ starts the second line");
    static_assert(sizeof(SpinBarrier) == 128, "SpinBarrier is two cache lines");
  }

  // Blocks (spins, then yields) until all participants arrived. The last to
  // arrive runs `on_last()` before releasing the others, so its writes are
  // visible to everyone after the barrier. Thread-safe for the
  // `participants` threads; does not allocate.
  template <class Fn>
  void arrive_and_wait(Fn&& on_last) {
    // acquire: read the generation before counting ourselves in.
    const unsigned generation = generation_.load(std::memory_order_acquire);
    // acq_rel: our prior writes are visible to the last arriver, and the
    // last arriver sees everyone's writes.
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == participants_) {
      on_last();
      // relaxed: no one reads arrived_ until the generation_ release below
      // lets them out, and that release orders this store too.
      arrived_.store(0, std::memory_order_relaxed);
      // release: on_last()'s writes and the reset count before the new generation.
      generation_.store(generation + 1, std::memory_order_release);
      return;
    }
    SpinWait wait;
    // acquire: pairs with the last arriver's release, so on_last()'s writes
    // and everyone's pre-barrier writes are visible once we leave.
    while (generation_.load(std::memory_order_acquire) == generation) wait.once();
  }
  // As above, with nothing to run at the last arrival.
  void arrive_and_wait() {
    arrive_and_wait([] {});
  }

 private:
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<unsigned> generation_{0};
  const unsigned participants_;
};

}  // namespace seer
