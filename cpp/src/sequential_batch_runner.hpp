// The vector env's runner for executors without a shared engine (serial and
// the comparison executors): each instance has its own executor, stepped one after
// another.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "executor.hpp"

namespace seer {

class SequentialBatchRunner final : public BatchRunner {
 public:
  // Each instance gets make_executor(name, num_threads).
  SequentialBatchRunner(std::string name, unsigned num_threads)
      : name_(std::move(name)), num_threads_(num_threads) {}

  std::unique_ptr<Executor> add_instance() override {
    auto executor = make_executor(name_, num_threads_);
    members_.push_back(executor.get());
    return executor;
  }
  void run_steps(const std::size_t* members, const StepWindow* windows, StepStats* stats,
                 std::exception_ptr* failures, std::size_t count) override {
    for (std::size_t k = 0; k < count; ++k) {
      stats[k] = StepStats{};
      stats[k].threads = members_.at(members[k])->num_threads();
      failures[k] = nullptr;
      try {
        members_.at(members[k])->run_step(windows[k], stats[k]);
      } catch (...) {
        failures[k] = std::current_exception();
      }
    }
  }
  void prewake() override {
    for (Executor* executor : members_) executor->prewake();
  }
  void release_threads() override {
    for (Executor* executor : members_) executor->release_threads();
  }

 private:
  std::string name_;
  unsigned num_threads_;
  std::vector<Executor*> members_;  // in add_instance() order
};

}  // namespace seer
