#include <stdexcept>

#include "seer/executor.hpp"
#include "baselines/barrier_executor.hpp"
#include "baselines/locked_executor.hpp"
#include "seer/parallel_executor.hpp"
#include "seer/serial_executor.hpp"

namespace seer {

std::vector<std::string> executor_names() { return {"serial", "parallel", "locked", "barrier"}; }

std::unique_ptr<Executor> make_executor(const std::string& name, unsigned num_threads) {
  if (num_threads < 1 || num_threads > 1024) {
    throw std::invalid_argument("num_threads must be in [1, 1024], got " +
                                std::to_string(num_threads));
  }
  if (name == "serial") return std::make_unique<SerialExecutor>();
  if (name == "parallel") return std::make_unique<ParallelExecutor>(num_threads);
  if (name == "locked") return std::make_unique<LockedExecutor>(num_threads);
  if (name == "barrier") return std::make_unique<BarrierExecutor>(num_threads);
  std::string known;
  for (const auto& n : executor_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("executor must be one of " + known + "; got '" + name + "'");
}

}  // namespace seer
