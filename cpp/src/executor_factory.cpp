#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <stdexcept>

#include "seer/executor.hpp"
#include "baselines/barrier_executor.hpp"
#include "baselines/locked_executor.hpp"
#include "seer/parallel_executor.hpp"
#include "seer/sequential_batch_runner.hpp"
#include "seer/serial_executor.hpp"

namespace seer {

std::vector<std::string> executor_names() { return {"serial", "parallel", "locked", "barrier"}; }

unsigned max_num_threads() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int usable = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  return std::max(64u, 8u * static_cast<unsigned>(std::max(usable, 1)));
}

void check_num_threads(std::uint64_t num_threads) {
  const unsigned most = max_num_threads();
  if (num_threads < 1 || num_threads > most) {
    throw std::invalid_argument("num_threads must be in [1, " + std::to_string(most) +
                                "] (8 per usable CPU, at least 64), got " +
                                std::to_string(num_threads));
  }
}

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
