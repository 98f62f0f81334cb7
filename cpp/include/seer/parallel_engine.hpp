// The machinery behind ParallelExecutor: thread pool, barrier, per-worker
// state and the executive list, shared by every instance stepped together.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "seer/executive_list.hpp"
#include "seer/executor.hpp"
#include "seer/local_queue.hpp"
#include "seer/spin_barrier.hpp"
#include "seer/thread_pool.hpp"

namespace seer {

class ParallelExecutor;

class ParallelEngine {
 public:
  explicit ParallelEngine(unsigned num_threads);
  ~ParallelEngine();
  unsigned num_threads() const { return pool_.size(); }
  // Wakes parked workers for a step that is coming soon.
  void prewake() { pool_.prewake(); }

  // One step of each instance, all in one parallel region: instance i runs
  // windows[i] and fills stats[i]. Returns the failures (null where none);
  // a failing instance stops, the others complete their step.
  std::vector<std::exception_ptr> run_steps(ParallelExecutor* const* instances,
                                            const StepWindow* windows, StepStats* stats,
                                            std::size_t count);
  // on_init of every entity of `instance`, in parallel.
  void initialize(ParallelExecutor& instance);
  // fn(i) for i in [0, n) on the pool; rethrows the first exception.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);
  // Node pool of the calling thread outside a parallel region (worker 0's).
  NodePool& caller_pool();

 private:
  struct Worker;
  struct Batch;
  void worker_step(unsigned w, Batch& batch);
  void begin_slice(Worker& me, Batch& batch);
  void steal(Worker& me, unsigned w, Batch& batch);
  void drain_list(Worker& me, Batch& batch, ExecutiveList& list);
  void drain_entity(Worker& me, ParallelExecutor& inst, std::size_t i, EntityId e, double horizon);
  void end_round(Batch& batch);
  void prepare(Batch& batch);

  ThreadPool pool_;
  SpinBarrier barrier_;
  std::unique_ptr<Worker[]> workers_;
  // One list per worker, covering the worker's slice of the batch's entities.
  std::vector<std::unique_ptr<ExecutiveList>> executive_;
  std::vector<std::uint32_t> instance_of_;  // global entity id -> instance
};

}  // namespace seer
