// The executor registry: executors by name, in registration order. The
// runtime registers its own ("serial", "parallel"); others (the comparison
// executors of cpp/comparison/) register through register_executor().
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "executor.hpp"
#include "parallel_executor.hpp"
#include "platform.hpp"
#include "sequential_batch_runner.hpp"
#include "serial_executor.hpp"

namespace seer {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::pair<std::string, ExecutorFactory>> entries;  // registration order

  Registry() {
    entries.emplace_back("serial", [](unsigned num_threads) -> std::unique_ptr<Executor> {
      // Refused rather than run on 1 thread: the caller asked for threads it
      // would silently not get (and env.runtime would contradict its request).
      if (num_threads != 1) {
        throw std::invalid_argument(
            "num_threads must be 1 for executor 'serial' (use 'parallel' for more threads), "
            "got " +
            std::to_string(num_threads));
      }
      return std::make_unique<SerialExecutor>();
    });
    entries.emplace_back("parallel", [](unsigned num_threads) -> std::unique_ptr<Executor> {
      return std::make_unique<ParallelExecutor>(num_threads);
    });
  }
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed, like the model registry
  return *r;
}

// The factory registered under `name`; empty if none.
ExecutorFactory find(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [n, factory] : r.entries) {
    if (n == name) return factory;
  }
  return {};
}

}  // namespace

void register_executor(const std::string& name, ExecutorFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& [n, f] : r.entries) {
    if (n == name) {
      f = std::move(factory);
      return;
    }
  }
  r.entries.emplace_back(name, std::move(factory));
}

std::vector<std::string> executor_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [n, f] : r.entries) names.push_back(n);
  return names;
}

unsigned max_num_threads() {
  return std::max(64u, 8u * platform::usable_cpus());
}

std::string num_threads_range() {
  return "[1, " + std::to_string(max_num_threads()) + "] (8 per usable CPU, at least 64)";
}

std::invalid_argument num_threads_error(const std::string& got) {
  return std::invalid_argument("num_threads must be in " + num_threads_range() + ", got " + got);
}

void check_num_threads(std::uint64_t num_threads) {
  if (num_threads < 1 || num_threads > max_num_threads()) {
    throw num_threads_error(std::to_string(num_threads));
  }
}

std::unique_ptr<Executor> make_executor(const std::string& name, unsigned num_threads) {
  check_num_threads(num_threads);
  if (const ExecutorFactory factory = find(name)) return factory(num_threads);
  std::string known;
  for (const auto& n : executor_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("executor must be one of " + known + "; got '" + name + "'");
}

std::unique_ptr<BatchRunner> make_batch_runner(const std::string& name, unsigned num_threads) {
  check_num_threads(num_threads);
  if (name == "parallel") return std::make_unique<ParallelBatchRunner>(num_threads);
  if (!find(name)) {
    make_executor(name, num_threads);  // throws the error that names the known executors
  }
  return std::make_unique<SequentialBatchRunner>(name, num_threads);
}

bool runs_on_calling_thread(const std::string& name) { return name == "serial"; }

}  // namespace seer
