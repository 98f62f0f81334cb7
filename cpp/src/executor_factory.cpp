#include <algorithm>
#include <stdexcept>

#include "seer/executor.hpp"
#include "baselines/barrier_executor.hpp"
#include "baselines/locked_executor.hpp"
#include "seer/parallel_executor.hpp"
#include "seer/sequential_batch_runner.hpp"
#include "seer/serial_executor.hpp"

namespace seer {

std::vector<std::string> executor_names() { return {"serial", "parallel", "locked", "barrier"}; }

namespace {

void check_num_threads(unsigned num_threads) {
  if (num_threads < 1 || num_threads > 1024) {
    throw std::invalid_argument("num_threads must be in [1, 1024], got " +
                                std::to_string(num_threads));
  }
}

}  // namespace

std::unique_ptr<Executor> make_executor(const std::string& name, unsigned num_threads) {
  check_num_threads(num_threads);
  if (name == "serial") {
    // Refused rather than run on 1 thread: the caller asked for threads it
    // would silently not get (and env.runtime would contradict its request).
    if (num_threads != 1) {
      throw std::invalid_argument(
          "num_threads must be 1 for executor 'serial' (use 'parallel' for more threads), got " +
          std::to_string(num_threads));
    }
    return std::make_unique<SerialExecutor>();
  }
  if (name == "parallel") return std::make_unique<ParallelExecutor>(num_threads);
  if (name == "locked") return std::make_unique<LockedExecutor>(num_threads);
  if (name == "barrier") return std::make_unique<BarrierExecutor>(num_threads);
  std::string known;
  for (const auto& n : executor_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("executor must be one of " + known + "; got '" + name + "'");
}

std::unique_ptr<BatchRunner> make_batch_runner(const std::string& name, unsigned num_threads) {
  check_num_threads(num_threads);
  if (name == "parallel") return std::make_unique<ParallelBatchRunner>(num_threads);
  const auto names = executor_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    make_executor(name, num_threads);  // throws the error that names the known executors
  }
  return std::make_unique<SequentialBatchRunner>(name, num_threads);
}

bool runs_on_calling_thread(const std::string& name) { return name == "serial"; }

}  // namespace seer
