// CompiledModel: a Model whose handlers are C function pointers (handler_abi.h).
//
// The runtime side of seer_env.NumbaModel: numba compiles the Python handlers
// to cfuncs, and this class calls them on the worker threads like any C++
// model's handlers, without the GIL. Entity states, the snapshot and the
// parameter record are byte buffers owned here, laid out as the model
// declared them; digests, save/load and the foreign-write check read them as
// for any model.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "handler_abi.h"
#include "seer/model.hpp"

namespace seer {

class CompiledModel final : public Model {
 public:
  // `keepalive` owns the machine code behind `handlers` (released with the
  // model). Throws std::invalid_argument if a required handler is missing.
  CompiledModel(ModelSpec spec, std::size_t state_size, std::size_t public_size,
                std::vector<unsigned char> params, const seer_model_handlers& handlers,
                std::shared_ptr<void> keepalive);

  const ModelSpec& spec() const override { return spec_; }
  void reset_states() override;
  void on_init(Context& ctx) override;
  void on_step_begin(Context& ctx) override;
  bool has_step_begin() const override { return handlers_.on_step_begin != nullptr; }
  void on_action(Context& ctx, const ActionView& action) override;
  void on_event(Context& ctx, const Event& event) override;
  void write_snapshot(EntityId e) override;
  void write_snapshots(EntityId begin, EntityId end) override;
  void observe(EntityId agent, float* obs) const override;
  double reward(EntityId agent) const override;
  bool terminated(EntityId agent) const override;
  bool truncated(EntityId agent) const override;
  void info(EntityId agent, std::int64_t* out) const override;
  void write_outputs(EntityId begin, EntityId end, const Outputs& out) const override;
  void state(float* out) const override;
  void totals(std::int64_t* out) const override;

  // The stop flag of the dispatcher that runs this model (Dispatcher::stop_flag):
  // while a handler runs, seer_handler_stop_requested() on its thread reads it,
  // and a handler that fails while it is set is reported as Interrupted.
  void watch_stop(const std::atomic<bool>* flag) { stop_ = flag; }
  // The time of the boundary about to be computed, for errors of the boundary
  // hooks (the Simulation calls it, serially, before each boundary).
  void at_boundary(double t) { boundary_time_ = t; }

  std::size_t entity_state_size() const override { return state_size_; }
  unsigned char* entity_state(EntityId e) override { return states_data() + e * state_size_; }
  std::size_t public_size() const override { return public_size_; }
  unsigned char* public_state(EntityId e) override { return public_data() + e * public_size_; }

 private:
  unsigned char* states_data() { return reinterpret_cast<unsigned char*>(states_.data()); }
  const unsigned char* states_data() const {
    return reinterpret_cast<const unsigned char*>(states_.data());
  }
  unsigned char* public_data() { return reinterpret_cast<unsigned char*>(snapshot_.data()); }
  const unsigned char* public_data() const {
    return reinterpret_cast<const unsigned char*>(snapshot_.data());
  }
  const void* params() const { return params_.data(); }
  // Throws HandlerError for a failed boundary hook `what` of `agent`.
  void check_boundary(std::int32_t status, const char* what, EntityId agent) const;
  // A range hook of agents [begin, end) writing their rows from `out` on.
  void call_agents_hook(seer_agents_fn fn, const char* what, EntityId begin, EntityId end,
                        void* out, std::size_t out_size) const;
  // A flag hook, or zeros where the model has none.
  void write_flags(seer_agents_fn fn, const char* what, EntityId begin, EntityId end,
                   std::uint8_t* rows) const;

  ModelSpec spec_;
  std::size_t state_size_, public_size_;
  // 8-byte words: records are read as their widest field (8 bytes) by numba.
  std::vector<std::uint64_t> states_, snapshot_;
  std::vector<unsigned char> params_;
  seer_model_handlers handlers_;
  std::shared_ptr<void> keepalive_;
  double boundary_time_ = 0.0;  // at_boundary()
  const std::atomic<bool>* stop_ = nullptr;  // watch_stop()
};

}  // namespace seer
