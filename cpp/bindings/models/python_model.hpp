// PythonModel: a Model whose handlers are Python methods (seer_env.PythonModel).
//
// For prototyping: each handler call takes the GIL, so a Python model runs
// under the serial executor only. Entity states and the snapshot are numpy
// structured arrays owned here; the raw state bytes the runtime hashes, saves
// and (with check=True) compares are those arrays' buffers, so digests,
// save/load and the foreign-write check work exactly as for C++ models.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "seer/errors.hpp"
#include "seer/model.hpp"

namespace seer::bindings {

class PythonModel;

// The `ctx` a Python handler receives: valid only while that handler runs
// (one object per model, pointed at the current Context).
struct PyHandlerContext {
  Context* ctx = nullptr;
  PythonModel* model = nullptr;
  Context& get() const;
};

// `ctx.rng`: the handler entity's own stream (keeps the context alive).
struct PyHandlerRng {
  pybind11::object ctx_obj;
  PyHandlerContext* ctx = nullptr;
};

// The `event` an on_event handler receives: a copy of the event and a
// reference to the payload dtype, so that an event kept after its handler
// (even after the env is gone) stays a valid, self-contained value.
struct PyHandlerEvent {
  Event event;
  pybind11::object payload_dtype;  // numpy dtype, or None for raw bytes
};

class PythonModel final : public Model {
 public:
  // `impl` is a seer_env.PythonModel instance. Called with the GIL held.
  explicit PythonModel(pybind11::object impl);
  ~PythonModel() override;

  const ModelSpec& spec() const override { return spec_; }
  void reset_states() override;
  void on_init(Context& ctx) override;
  void on_step_begin(Context& ctx) override;
  void on_action(Context& ctx, const ActionView& action) override;
  void on_event(Context& ctx, const Event& event) override;
  void write_snapshot(EntityId e) override;
  void after_snapshot() override;
  void observe(EntityId agent, float* obs) const override;
  void action_mask(EntityId agent, std::uint8_t* out) const override;
  double reward(EntityId agent) const override;
  bool terminated(EntityId agent) const override;
  bool truncated(EntityId agent) const override;
  void info(EntityId agent, std::int64_t* out) const override;
  void state(float* out) const override;
  void totals(std::int64_t* out) const override;

  std::size_t entity_state_size() const override { return state_size_; }
  unsigned char* entity_state(EntityId e) override { return states_data_ + e * state_size_; }
  std::size_t public_size() const override { return public_size_; }
  unsigned char* public_state(EntityId e) override { return public_data_ + e * public_size_; }

  // Used by the handler-context bindings.
  const pybind11::object& snapshot_view() const { return snapshot_ro_; }
  const pybind11::object& payload_dtype() const { return payload_dtype_; }
  const pybind11::object& rng_object() const { return rng_obj_; }
  // A runtime error raised inside ctx.schedule(): re-raised after the handler
  // returns even if Python code caught it (a model cannot swallow a breach).
  void set_pending(std::exception_ptr error) { pending_ = std::move(error); }

 private:
  // Runs a handler hook for ctx.self() with the GIL held.
  template <class... Args>
  void run_handler(Context& ctx, const pybind11::object& hook, Args&&... args);
  // Calls a boundary hook; failures become HandlerError naming `what`.
  template <class... Args>
  pybind11::object call_boundary(const char* what, EntityId agent, const pybind11::object& hook,
                                 Args&&... args) const;
  pybind11::object state_record(EntityId e) const;     // writable view of states[e]
  // Checked conversions of boundary hook results; HandlerError naming the
  // hook, the agent and what it returned otherwise.
  HandlerError bad_result(const char* what, EntityId agent, const std::string& expected,
                          const pybind11::handle& result) const;
  void copy_reals(const char* what, EntityId agent, const pybind11::object& result,
                  std::size_t n, float* out) const;
  void copy_integers(const char* what, EntityId agent, const pybind11::object& result,
                     std::size_t n, std::int64_t* out) const;
  bool to_flag(const char* what, EntityId agent, const pybind11::object& result) const;
  static bool is_real(const pybind11::handle& value);
  static std::string short_repr(const pybind11::handle& value);
  pybind11::object readonly_record(EntityId e) const;  // read-only view (boundary)

  ModelSpec spec_;
  pybind11::object impl_;
  pybind11::object ctx_obj_;      // the shared PyHandlerContext
  pybind11::object rng_obj_;      // ctx.rng (a PyHandlerRng holding ctx_obj_)
  PyHandlerContext* ctx_ = nullptr;
  pybind11::array states_, snapshot_;
  pybind11::object states_ro_, snapshot_ro_;  // read-only views
  pybind11::object payload_dtype_;            // numpy dtype or None
  unsigned char* states_data_ = nullptr;
  unsigned char* public_data_ = nullptr;
  std::size_t state_size_ = 0, public_size_ = 0;
  struct FieldCopy {
    std::size_t from, to, size;
  };
  std::vector<FieldCopy> public_fields_;  // write_snapshot(): state bytes -> snapshot bytes
  double boundary_time_ = 0.0;            // for errors raised by boundary hooks
  std::exception_ptr pending_;
  // Hooks, looked up once.
  pybind11::object write_snapshot_;  // write_snapshot(state, public) or None: copy public_fields
  pybind11::object on_init_, on_step_begin_, on_action_, on_event_, after_snapshot_, observe_,
      action_mask_, reward_, terminated_, truncated_, info_, global_state_, totals_, reset_;
};

// The ModelSpec of a PythonModel's `_runtime_layout()["spec"]` dict (GIL held).
ModelSpec spec_from_python(const pybind11::dict& spec);
// Builds the Model for a seer_env.PythonModel instance (GIL held).
std::unique_ptr<Model> make_python_model(const pybind11::object& impl);
// ValueError unless (executor, num_threads) is ("serial", 1).
void require_serial_for_python(const std::string& executor, unsigned num_threads);

}  // namespace seer::bindings
