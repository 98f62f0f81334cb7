// The state one env instance keeps on the parallel engine: its entities'
// queues (layer 1 of the dual-layer event queue), the step window being run
// and the step's bookkeeping (horizon, rounds, budget count, first failure).
//
// Owned by the instance's ParallelExecutor; ParallelEngine reads and writes
// it while it runs the instance's step or initialize() (and nobody else does
// then). A plain struct: the engine is the only code that touches the step
// fields, so accessors would add nothing but names.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <tuple>

#include "dispatcher.hpp"
#include "compiler.hpp"
#include "executor.hpp"
#include "local_queue.hpp"

namespace seer {

// The parts of initialize() and of a step, in serial order. A failure key
// starts with the phase so that comparing keys picks the failure a serial run
// would have hit first (step begin of every entity, then actions, then events).
enum class Phase : std::uint8_t { kInit, kStepBegin, kAction, kEvent };

struct ParallelInstance {
  // Serial order of a failure: (phase, time, source, seq).
  using FailureKey = std::tuple<Phase, double, std::uint64_t, std::uint64_t>;

  // Points at `dispatcher` and gives each of its entities an empty queue.
  // Not thread-safe; allocates.
  void bind(Dispatcher& d) {
    dispatcher = &d;
    num_entities = d.num_entities();
    lookahead = d.spec().lookahead;
    queues = std::make_unique<LocalQueue[]>(num_entities);
  }

  // Copies e's heap top to where the begin read finds it. Only the thread
  // holding e (or any thread between steps). Does not allocate.
  void publish_top(EntityId e) { queues[e].publish_top(); }

  // Starts loading what draining e will touch first: its queue (one line,
  // holding the addresses of the rest), its heap's keys and earliest event,
  // its runtime record and its state. Entities are drained once or twice per
  // round, so without this each visit begins with a chain of cache misses.
  // It reads e's queue line (for the heap's addresses), so prefetch_queue()
  // that line a few visits earlier. Thread-safe (hints only); does not
  // allocate.
  SEER_PREFETCH_HELPER void prefetch_queue(EntityId e) const { SEER_PREFETCH(&queues[e]); }
  SEER_PREFETCH_HELPER void prefetch(EntityId e) const {
    SEER_PREFETCH(&queues[e]);
    queues[e].prefetch_heap();
    dispatcher->prefetch(e);
  }

  // Records the exception being handled as this instance's failure if its
  // key is the smallest so far. Call from a catch block. Thread-safe (takes
  // a mutex; failures are rare); does not allocate.
  void fail(const FailureKey& key) {
    std::lock_guard<std::mutex> lock(failure_mutex);
    if (!failure || key < failure_key) {
      failure_key = key;
      failure = std::current_exception();
    }
    // release: the failure written above is visible to whoever sees the flag.
    failed.store(true, std::memory_order_release);
  }

  // Throws the recorded failure (if any) and clears it. Only after the
  // parallel region has ended (single-threaded).
  void rethrow_failure() {
    // acquire: pairs with fail()'s release, so `failure` is complete.
    if (!failed.load(std::memory_order_acquire)) return;
    std::exception_ptr first = failure;
    failure = nullptr;
    // relaxed: single-threaded here; the next region starts after a barrier.
    failed.store(false, std::memory_order_relaxed);
    std::rethrow_exception(first);
  }

  // -- Set by bind().
  Dispatcher* dispatcher = nullptr;
  std::uint32_t num_entities = 0;
  double lookahead = 0.0;
  std::unique_ptr<LocalQueue[]> queues;  // one per entity

  // -- The step in progress, written by the engine.
  const StepWindow* window = nullptr;
  double horizon = 0.0;  // events below it are safe this round
  bool finished = false;
  std::uint64_t rounds = 0;
  // Own cache lines: every worker adds to these, and sharing a line with the
  // fields the rounds read would slow every round.
  alignas(64) std::atomic<std::uint64_t> events_in_step{0};
  alignas(64) std::atomic<bool> failed{false};
  std::mutex failure_mutex;  // guards the two below
  FailureKey failure_key;
  std::exception_ptr failure;
};

}  // namespace seer
