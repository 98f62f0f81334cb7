// The barrier that ends each round of the parallel executor: spin, yield,
// then park (staged_wait.hpp says why and for how long). A worker that was
// preempted costs the others about a wake-up, not its time slice; on a quiet
// machine rounds meet within the spin stage and never touch the futex.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "staged_wait.hpp"

namespace seer {

// Layout: arrived_ (every arriver's fetch_add) starts the first cache line;
// generation_ (what the waiters watch) and sleepers_ (touched only when a
// waiter parks) start the second, so spinning waiters do not slow down the
// arrivals; the settings are read-only during a region.
class alignas(64) RoundBarrier {
 public:
  // Not thread-safe; does not allocate.
  explicit RoundBarrier(unsigned participants)
      : participants_(participants), budget_(WaitBudget::for_team(participants)) {
    static_assert(offsetof(RoundBarrier, arrived_) == 0, "arrived_ starts the first line");
    static_assert(offsetof(RoundBarrier, generation_) == 64, "generation_ starts the second line");
    static_assert(sizeof(RoundBarrier) == 128, "RoundBarrier is two cache lines");
  }

  // Changes the team size (the adaptive pool runs a step with fewer threads).
  // Only while no thread is inside arrive_and_wait(); does not allocate.
  void set_participants(unsigned participants) {
    participants_ = participants;
    budget_ = WaitBudget::for_team(participants);
  }
  unsigned participants() const { return participants_; }
  // For tests: replaces the stage budgets. Same rules as set_participants().
  void set_budget(const WaitBudget& budget) { budget_ = budget; }
  const WaitBudget& budget() const { return budget_; }

  // Blocks until all participants arrived. The last to arrive runs
  // `on_last()` before releasing the others, so its writes are visible to
  // everyone after the barrier. Returns the stage this thread's wait reached
  // (kSpin for the last arriver). Thread-safe for the participants; does not
  // allocate.
  template <class Fn>
  WaitStage arrive_and_wait(Fn&& on_last) {
    // acquire: read the generation before counting ourselves in.
    const std::uint32_t generation = generation_.load(std::memory_order_acquire);
    // acq_rel: our prior writes are visible to the last arriver, and the
    // last arriver sees everyone's writes.
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == participants_) {
      on_last();
      // relaxed: no one reads arrived_ until the generation_ store below
      // lets them out, and that store (seq_cst, a release) orders this one.
      arrived_.store(0, std::memory_order_relaxed);
      // seq_cst store (a release: on_last()'s writes and the reset count
      // happen before the new generation) + wake-up of parked waiters.
      notify_changed(generation_, generation + 1, sleepers_);
      return WaitStage::kSpin;
    }
    // Acquires the new generation: pairs with notify_changed's store.
    return wait_for_change(generation_, generation, sleepers_, budget_);
  }
  // As above, with nothing to run at the last arrival.
  WaitStage arrive_and_wait() {
    return arrive_and_wait([] {});
  }

 private:
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> sleepers_{0};
  unsigned participants_;
  WaitBudget budget_;
};

}  // namespace seer
