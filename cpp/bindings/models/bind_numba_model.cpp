// seer_env.NumbaModel's runtime side: the context API's addresses (numba's
// compiled handlers call them by name), and the CompiledModel built from a
// model instance's `_compiled_layout()`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "compiled_model.hpp"
#include "handler_abi.h"
#include "models/numba_model.hpp"
#include "models/python_model.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

std::uintptr_t address(const void* fn) { return reinterpret_cast<std::uintptr_t>(fn); }

template <class Fn>
Fn handler(const py::dict& handlers, const char* name) {
  if (!handlers.contains(name)) return nullptr;
  return reinterpret_cast<Fn>(handlers[name].cast<std::uintptr_t>());
}

// Python references must be dropped with the GIL held, whichever thread
// releases the model.
std::shared_ptr<void> keep_alive(py::object object) {
  return std::shared_ptr<void>(new py::object(std::move(object)), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

}  // namespace

std::unique_ptr<Model> make_compiled_model(const py::object& impl) {
  const py::object base = py::module_::import("seer_env").attr("NumbaModel");
  if (!py::isinstance(impl, base)) return nullptr;
  const py::object layout_obj = impl.attr("_compiled_layout")();
  if (layout_obj.is_none()) return nullptr;
  const py::dict layout = layout_obj;
  const py::dict h = layout["handlers"];
  seer_model_handlers handlers{};
  handlers.reset = handler<seer_states_fn>(h, "reset");
  handlers.on_init = handler<seer_init_fn>(h, "on_init");
  handlers.on_step_begin = handler<seer_init_fn>(h, "on_step_begin");
  handlers.on_action = handler<seer_action_fn>(h, "on_action");
  handlers.on_event = handler<seer_event_fn>(h, "on_event");
  handlers.write_snapshot = handler<seer_write_snapshots_fn>(h, "write_snapshot");
  handlers.observe = handler<seer_agents_fn>(h, "observe");
  handlers.reward = handler<seer_agents_fn>(h, "reward");
  handlers.terminated = handler<seer_agents_fn>(h, "terminated");
  handlers.truncated = handler<seer_agents_fn>(h, "truncated");
  handlers.info = handler<seer_agents_fn>(h, "info");
  handlers.global_state = handler<seer_states_fn>(h, "global_state");
  handlers.totals = handler<seer_states_fn>(h, "totals");
  const std::string params = layout["params"].cast<std::string>();
  return std::make_unique<CompiledModel>(
      spec_from_python(layout["spec"]), layout["state_size"].cast<std::size_t>(),
      layout["public_size"].cast<std::size_t>(),
      std::vector<unsigned char>(params.begin(), params.end()), handlers,
      keep_alive(layout["keepalive"]));
}

void bind_numba_model(py::module_& m) {
  m.def(
      "handler_abi",
      [] {
        const seer_ctx_api* api = seer_handler_ctx_api();
        py::dict out;
        out["version"] = api->version;
        out["seer_ctx_now"] = address(reinterpret_cast<const void*>(api->now));
        out["seer_ctx_self"] = address(reinterpret_cast<const void*>(api->self));
        out["seer_ctx_source"] = address(reinterpret_cast<const void*>(api->source));
        out["seer_ctx_num_entities"] = address(reinterpret_cast<const void*>(api->num_entities));
        out["seer_ctx_lookahead"] = address(reinterpret_cast<const void*>(api->lookahead));
        out["seer_ctx_dt"] = address(reinterpret_cast<const void*>(api->dt));
        out["seer_ctx_uniform"] = address(reinterpret_cast<const void*>(api->uniform));
        out["seer_ctx_exponential"] = address(reinterpret_cast<const void*>(api->exponential));
        out["seer_ctx_below"] = address(reinterpret_cast<const void*>(api->below));
        out["seer_ctx_next_u64"] = address(reinterpret_cast<const void*>(api->next_u64));
        out["seer_ctx_schedule"] = address(reinterpret_cast<const void*>(api->schedule));
        out["seer_ctx_request_decision"] =
            address(reinterpret_cast<const void*>(api->request_decision));
        out["seer_handler_stop_requested"] =
            address(reinterpret_cast<const void*>(&seer_handler_stop_requested));
        return out;
      },
      "Addresses of the compiled-handler context functions (cpp/src/handler_abi.h), by "
      "symbol name, and the ABI version.");
}

}  // namespace seer::bindings
