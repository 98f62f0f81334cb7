// Comparison executor: window-synchronous conservative rounds (ROSS-style).
//
// Entities are statically partitioned over threads; each thread keeps one
// priority queue for all its entities. Each round every thread handles its
// events below H = min(LB + L, t_end); events for another thread's entities
// go through that thread's mailbox (a vector behind a mutex), merged after a
// barrier; a second barrier combines the threads' minima into the next LB.
// No CAS structures and no load balancing: what a classic partitioned engine
// does.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "event_heap.hpp"
#include "executor.hpp"
#include "spin_barrier.hpp"
#include "thread_pool.hpp"

namespace seer {

class BarrierExecutor final : public Executor {
 public:
  explicit BarrierExecutor(unsigned num_threads);
  std::string name() const override { return "barrier"; }
  unsigned num_threads() const override { return pool_.size(); }
  void prewake() override { pool_.prewake(); }
  void release_threads() override { pool_.stop(); }
  void bind(Dispatcher& dispatcher) override;
  void clear() override;
  void initialize() override;
  void insert(const Event& event) override;
  void collect_pending(std::vector<Event>& out) const override;
  std::size_t pending_count() const override;
  void run_step(const StepWindow& window, StepStats& stats) override;
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) override;

 private:
  struct alignas(64) Partition final : EventSink {
    void emit(const Event& event) override;
    BarrierExecutor* owner = nullptr;
    EntityId lo = 0, hi = 0;
    EventHeap heap;                // this thread's events, key order
    std::mutex mailbox_mutex;
    std::vector<Event> mailbox;    // events from other threads
    double local_min = 0.0;
    std::uint64_t events = 0, cross_events = 0;
    std::exception_ptr failure;
  };
  unsigned owner_of(EntityId e) const;
  void worker(unsigned w, const StepWindow& window);
  void merge_mailbox(Partition& p);
  void end_round(double t_end);

  ThreadPool pool_;
  SpinBarrier barrier_;
  Dispatcher* dispatcher_ = nullptr;
  double lookahead_ = 0.0;
  std::uint32_t num_entities_ = 0;
  std::unique_ptr<Partition[]> parts_;
  std::vector<std::uint32_t> owner_;  // entity -> partition
  double horizon_ = 0.0;
  bool finished_ = false;
  std::uint64_t rounds_ = 0;
  std::atomic<bool> failed_{false};
};

}  // namespace seer
