#include "vector_simulation.hpp"

#include <chrono>
#include <stdexcept>
#include <utility>

#include "model_registry.hpp"
#include "seer/memory.hpp"

namespace seer {

VectorSimulation::VectorSimulation(const std::string& model, const Config& config,
                                   std::size_t num_envs, const SimulationOptions& options,
                                   std::size_t memory_copies)
    // The maker runs in the target constructor's body, after config_used_ exists.
    : VectorSimulation([this, &model, &config] { return make_model(model, config, &config_used_); },
                       num_envs, options, memory_copies) {
  for (auto& sim : sims_) sim->set_config(config_used_);
}

VectorSimulation::VectorSimulation(const ModelMaker& make, std::size_t num_envs,
                                   const SimulationOptions& options, std::size_t memory_copies)
    : options_(options) {
  if (num_envs < 1 || num_envs > 65536) {
    throw std::invalid_argument("num_envs must be in [1, 65536], got " + std::to_string(num_envs));
  }
  runner_ = make_batch_runner(options.executor, options.num_threads);
  const std::size_t copies = memory_copies != 0 ? memory_copies : num_envs;
  SimulationOptions instance_options = options;
  for (std::size_t i = 0; i < num_envs; ++i) {
    auto sim = std::make_unique<Simulation>(make(), instance_options);
    // The model checked that one instance fits; check the whole batch before building it.
    if (i == 0) {
      require_memory(sim->spec(), "this config", copies);
      // The copies share the memory: one limit for all, the memory read once.
      instance_options.pending_limit = pending_event_limit(sim->spec(), copies);
      sim->set_pending_limit(instance_options.pending_limit);
    }
    sim->set_executor(runner_->add_instance());
    sims_.push_back(std::move(sim));
  }
}

void VectorSimulation::prewake() {
  repair_if_torn();
  runner_->prewake();
}

void VectorSimulation::start_on_one_thread(const std::string& why) {
  repair_if_torn();
  runner_->start_on_one_thread(why);
}

void VectorSimulation::release_threads() {
  repair_if_torn();
  runner_->release_threads();
}

void VectorSimulation::repair_if_torn() {
  if (!torn_) return;
  auto runner = make_batch_runner(options_.executor, options_.num_threads);
  std::vector<std::unique_ptr<Executor>> executors;
  for (std::size_t i = 0; i < sims_.size(); ++i) executors.push_back(runner->add_instance());
  (void)runner_.release();  // leaked: its pool and lists are the parent's, mid-step
  runner_ = std::move(runner);
  for (std::size_t i = 0; i < sims_.size(); ++i) {
    sims_[i]->replace_torn_executor(std::move(executors[i]));
  }
  torn_ = false;
}

void VectorSimulation::redirect_outputs(const Outputs& batch) {
  const ModelSpec& s = spec();
  const std::size_t n = s.num_agents;
  for (std::size_t i = 0; i < sims_.size(); ++i) {
    sims_[i]->redirect_outputs(Outputs{batch.observations + i * n * s.obs_dim,
                                       batch.rewards + i * n, batch.terminations + i * n,
                                       batch.truncations + i * n,
                                       batch.infos + i * n * s.info_keys.size(),
                                       batch.action_masks == nullptr
                                           ? nullptr
                                           : batch.action_masks +
                                                 i * n * static_cast<std::size_t>(s.action.n)});
  }
}

std::vector<std::exception_ptr> VectorSimulation::step(const void* actions,
                                                       const std::uint8_t* alive,
                                                       const std::uint8_t* modes,
                                                       const std::uint64_t* seeds) {
  const ModelSpec& s = spec();
  const std::size_t n = s.num_agents;
  const std::size_t action_bytes =
      s.action.discrete ? sizeof(std::int64_t) : sizeof(float) * s.action.dim;
  repair_if_torn();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::exception_ptr> failures(sims_.size());
  batch_.clear();
  windows_.clear();
  for (std::size_t i = 0; i < sims_.size(); ++i) {
    try {
      if (modes[i] == kReset) {
        sims_[i]->reset(seeds[i]);
      } else if (modes[i] == kStep) {
        const void* acts = static_cast<const unsigned char*>(actions) + i * n * action_bytes;
        const std::uint8_t* live = alive == nullptr ? nullptr : alive + i * n;
        windows_.push_back(sims_[i]->begin_step(acts, live));
        batch_.push_back(i);
      }
    } catch (...) {
      failures[i] = std::current_exception();
    }
  }
  // begin_step() cleared each instance's stop flag: a request made before
  // (or while) they ran holds. seq_cst fence: pairs with request_interrupt()'s,
  // so either we see its request here or its stores land after our clears.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (interrupt_.load(std::memory_order_relaxed)) {
    for (const std::size_t i : batch_) sims_[i]->request_interrupt();
  }
  // Checked steps run one handler at a time: each alone, outside the batch's
  // parallel region. After every begin_step(), which clears the interrupt
  // request: one made while these run stops the batch too.
  std::size_t kept = 0;
  for (std::size_t k = 0; k < batch_.size(); ++k) {
    const std::size_t i = batch_[k];
    if (!sims_[i]->step_checked()) {
      batch_[kept] = i;
      windows_[kept++] = windows_[k];
      continue;
    }
    try {
      StepStats stats;
      sims_[i]->run_checked(windows_[k], stats);
      sims_[i]->finish_step(windows_[k], stats, start);
    } catch (...) {
      failures[i] = std::current_exception();
    }
  }
  batch_.resize(kept);
  windows_.resize(kept);
  if (!batch_.empty()) {
    stats_.resize(batch_.size());
    batch_failures_.resize(batch_.size());
    runner_->run_steps(batch_.data(), windows_.data(), stats_.data(), batch_failures_.data(),
                       batch_.size());
    for (std::size_t k = 0; k < batch_.size(); ++k) {
      const std::size_t i = batch_[k];
      if (batch_failures_[k]) {
        failures[i] = std::exchange(batch_failures_[k], nullptr);
        continue;
      }
      try {
        sims_[i]->finish_step(windows_[k], stats_[k], start);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  }
  return failures;
}

}  // namespace seer
