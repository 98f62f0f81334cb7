#include "comparison_executors.hpp"

#include <memory>
#include <mutex>

#include "barrier_executor.hpp"
#include "executor.hpp"
#include "locked_executor.hpp"

namespace seer {

void register_comparison_executors() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_executor("locked", [](unsigned num_threads) -> std::unique_ptr<Executor> {
      return std::make_unique<LockedExecutor>(num_threads);
    });
    register_executor("barrier", [](unsigned num_threads) -> std::unique_ptr<Executor> {
      return std::make_unique<BarrierExecutor>(num_threads);
    });
  });
}

}  // namespace seer
