#include "thread_pool.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "block_async_signals.hpp"
#include "platform.hpp"
#include "spin_wait.hpp"

namespace seer {

// State shared by the caller and the workers. Held by shared_ptr so that a
// pool abandoned after fork() never frees memory its (nonexistent) threads use.
struct ThreadPool::Shared {
  std::atomic<std::uint64_t> generation{0};  // bumped once per run()
  std::atomic<unsigned> remaining{0};        // workers still inside the job
  std::atomic<bool> stop{false};
  std::atomic<unsigned> sleepers{0};
  std::atomic<std::uint64_t> nudges{0};      // bumped once per prewake() that woke anyone
  const std::function<void(unsigned)>* job = nullptr;
  std::mutex mutex;
  std::condition_variable wake;
};

ThreadPool::ThreadPool(unsigned size) : size_(size < 1 ? 1 : size) {}

ThreadPool::~ThreadPool() {
  if (!shared_) return;
  if (owner_pid_ != platform::process_id()) {
    abandon_threads();
    return;
  }
  stop_and_join();
}

void ThreadPool::stop() {
  if (!shared_) return;
  if (owner_pid_ != platform::process_id()) {
    abandon_threads();
    return;
  }
  stop_and_join();
  shared_.reset();
}

void ThreadPool::abandon_threads() {
  // The handles name threads of the parent process: joining or detaching
  // them here is undefined, so leak them, with the shared state (whose mutex
  // a parent thread may have held at the fork).
  new std::vector<std::thread>(std::move(threads_));
  new std::shared_ptr<Shared>(std::move(shared_));
  threads_.clear();
}

void ThreadPool::stop_and_join() {
  // seq_cst: with the notify under the mutex, a worker either sees stop in
  // its wait predicate or is woken after this store.
  shared_->stop.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->wake.notify_all();
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void ThreadPool::start() {
  if (shared_ && owner_pid_ != platform::process_id()) {
    // A forked child: the parent's workers do not exist here.
    abandon_threads();
  }
  if (shared_) return;
  owner_pid_ = platform::process_id();
  shared_ = std::make_shared<Shared>();
  // Workers never run asynchronous signal handlers: SIGINT and friends go to
  // a thread that can act on them (Python's). Threads inherit the creator's
  // mask, so block around the creation (no window) and restore ours.
  BlockAsyncSignals blocked;
  try {
    threads_.reserve(size_ - 1);
    for (unsigned i = 1; i < size_; ++i) threads_.emplace_back(worker_main, shared_, i);
  } catch (const std::exception& e) {
    // Out of threads or memory: stop the workers that did start, so the
    // pool is as before (not started) and a later run() tries again.
    const std::size_t started = threads_.size();
    stop_and_join();
    shared_.reset();
    throw std::runtime_error("could not start " + std::to_string(size_ - 1) +
                             " worker threads (started " + std::to_string(started) +
                             ", then: " + e.what() +
                             "); use fewer threads or raise the process's thread/memory limits");
  }
}

std::uint64_t ThreadPool::run(const std::function<void(unsigned)>& fn) {
  if (size_ == 1) {
    fn(0);
    return 0;
  }
  if (!shared_ || owner_pid_ != platform::process_id()) start();
  Shared& s = *shared_;
  s.job = &fn;
  // relaxed: the generation bump below (seq_cst, a release) orders job and
  // remaining before any worker that sees the new generation.
  s.remaining.store(size_ - 1, std::memory_order_relaxed);
  // seq_cst: pairs with the worker's seq_cst sleepers increment (Dekker), so
  // either the worker sees the new generation or we see it asleep.
  s.generation.fetch_add(1, std::memory_order_seq_cst);
  if (s.sleepers.load(std::memory_order_seq_cst) != 0) {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.wake.notify_all();
  }
  fn(0);
  // acquire: the workers' writes inside fn are visible after they finish.
  if (s.remaining.load(std::memory_order_acquire) == 0) return 0;
  const auto waiting = std::chrono::steady_clock::now();
  SpinWait wait;
  while (s.remaining.load(std::memory_order_acquire) != 0) wait.once();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now() - waiting)
                                        .count());
}

void ThreadPool::prewake() {
  // Not started, or a forked child holding its parent's (nonexistent)
  // workers, whose mutex a parent thread may have held at the fork.
  if (!shared_ || owner_pid_ != platform::process_id()) return;
  Shared& s = *shared_;
  // seq_cst: a worker parking right now counts itself in (seq_cst) before
  // re-checking under the mutex; missing it only loses a hint anyway.
  if (s.sleepers.load(std::memory_order_seq_cst) == 0) return;
  std::lock_guard<std::mutex> lock(s.mutex);
  // seq_cst (under the mutex the waiters hold to check it): a parked worker
  // sees the new count when woken.
  s.nudges.fetch_add(1, std::memory_order_seq_cst);
  s.wake.notify_all();
}

void ThreadPool::worker_main(std::shared_ptr<Shared> shared, unsigned index) {
  Shared& s = *shared;
  std::uint64_t seen = 0;
  for (;;) {
    // Spin for the next job, then park; a prewake() while parked means a job
    // is coming: spin again, longer.
    auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
    SpinWait wait;
    std::uint64_t gen;
    // acquire: pairs with run()'s bump, so job and remaining are visible.
    // relaxed stop: only ends the spin; it is re-read with acquire below.
    while ((gen = s.generation.load(std::memory_order_acquire)) == seen &&
           !s.stop.load(std::memory_order_relaxed)) {
      if (std::chrono::steady_clock::now() >= spin_until) {
        std::unique_lock<std::mutex> lock(s.mutex);
        // seq_cst: pairs with run()'s seq_cst generation bump and sleepers
        // load (Dekker): either run() sees us asleep and notifies, or the
        // predicate below sees the new generation.
        s.sleepers.fetch_add(1, std::memory_order_seq_cst);
        // relaxed: nudges only changes under the mutex we hold.
        const std::uint64_t nudged = s.nudges.load(std::memory_order_relaxed);
        // seq_cst generation/stop: the other half of the Dekker pairs above;
        // relaxed nudges: read under the mutex that guards its changes.
        s.wake.wait(lock, [&] {
          return s.generation.load(std::memory_order_seq_cst) != seen ||
                 s.stop.load(std::memory_order_seq_cst) ||
                 s.nudges.load(std::memory_order_relaxed) != nudged;
        });
        // relaxed: a stale count only costs run() or prewake() a needless notify.
        s.sleepers.fetch_sub(1, std::memory_order_relaxed);
        spin_until = std::chrono::steady_clock::now() +
                     std::chrono::microseconds(kPrewakeSpinMicros);
        wait.reset();
        continue;
      }
      wait.once();
    }
    // acquire: pairs with the destructor's store; nothing is read after it.
    if (s.stop.load(std::memory_order_acquire)) return;
    // acquire: as in the spin loop, so the job of this generation is visible.
    gen = s.generation.load(std::memory_order_acquire);
    if (gen == seen) continue;
    seen = gen;
    (*s.job)(index);
    // release: make this worker's writes visible to the caller.
    s.remaining.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace seer
