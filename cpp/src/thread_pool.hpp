// A small persistent thread pool: the caller plus `size() - 1` workers run
// one function together, then the workers spin briefly and park.
//
// - Workers start lazily, on the first run() (never in a constructor that
//   may run before a fork()).
// - After fork() the child owns none of the parent's threads: run() notices
//   the changed pid and starts fresh workers (the old ones are abandoned).
// - Spin-then-park: a worker spins ~kSpinMicros for the next job (so steps
//   that follow each other closely do not pay a futex wake-up), then sleeps
//   on a condition variable until the next run().
// - prewake(): a caller that knows a run() is coming (an RL loop that just
//   got its actions from the policy) wakes parked workers early, so the
//   wake-up overlaps its own work instead of delaying the run.
#pragma once

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace seer {

class ThreadPool {
 public:
  static constexpr int kSpinMicros = 200;

  // Starts no thread; does not allocate. Not thread-safe (like every method).
  explicit ThreadPool(unsigned size);
  // Stops and joins the workers (blocks until they exit; in a forked child,
  // abandons the parent's instead).
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Participants per run(), the calling thread included. Thread-safe.
  unsigned size() const { return size_; }

  // Runs fn(i) for i in [0, size()) on distinct threads (i == 0 on the
  // caller) and blocks until all have returned. `fn` must not throw (catch
  // inside). Not reentrant and not thread-safe: one caller at a time.
  // Allocates only the first time (and after a fork). Throws
  // std::runtime_error (before running fn anywhere) if the workers cannot
  // be started. Returns the nanoseconds the caller waited, after its own
  // fn(0) returned, for the workers to finish (0 when they already had): on
  // a busy machine, mostly a worker waiting for a core (the adaptive pool
  // counts it as waiting).
  std::uint64_t run(const std::function<void(unsigned)>& fn);

  // Wakes parked workers to spin for a run() that is coming soon (they spin
  // up to kPrewakeSpinMicros, then park again). Cheap when none is parked
  // or the workers have not started; a no-op in a forked child until its
  // first run(). Does not block (but for the pool's mutex, briefly).
  // Same threading rules as run().
  void prewake();
  static constexpr int kPrewakeSpinMicros = 2000;

  // Stops and joins the workers (as the destructor does); the next run()
  // starts fresh ones. Same threading rules as run().
  void stop();

 private:
  struct Shared;
  // Starts the workers. On failure (out of threads or memory) joins those
  // that started, restores the signal mask and throws std::runtime_error
  // naming the count; the pool is then as if never started.
  void start();
  void stop_and_join();
  void abandon_threads();
  static void worker_main(std::shared_ptr<Shared> shared, unsigned index);

  unsigned size_;
  std::int64_t owner_pid_ = 0;
  std::shared_ptr<Shared> shared_;
  std::vector<std::thread> threads_;
};

}  // namespace seer
