// What a seer_env.PythonModel handler sees: the handler context (`ctx`), its
// random stream (`ctx.rng`) and the event (`event`). The same operations, and
// the same checks, as seer::Context for a C++ model.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <stdexcept>

#include "bindings.hpp"
#include "models/python_model.hpp"
#include "seer/context.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

struct RawPayload {
  unsigned char bytes[kPayloadBytes];
};

// Payload bytes from None, a bytes-like object, or (with payload_dtype) any
// value numpy converts to one record, e.g. a tuple.
RawPayload to_payload(const PythonModel& model, const py::object& payload) {
  RawPayload raw{};
  if (payload.is_none()) return raw;
  py::object source = payload;
  if (!PyObject_CheckBuffer(source.ptr())) {
    if (model.payload_dtype().is_none()) {
      throw std::invalid_argument(
          "payload must be None or bytes-like (declare payload_dtype to pass tuples), got " +
          py::repr(payload).cast<std::string>());
    }
    source = py::module_::import("numpy").attr("asarray")(payload, model.payload_dtype());
  }
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(source).request();
  const auto size = static_cast<std::size_t>(info.size * info.itemsize);
  if (size > kPayloadBytes) {
    throw std::invalid_argument("payload must be at most " + std::to_string(kPayloadBytes) +
                                " bytes, got " + std::to_string(size));
  }
  py::object contiguous = py::module_::import("numpy").attr("ascontiguousarray")(source);
  py::buffer_info flat = py::reinterpret_borrow<py::buffer>(contiguous).request();
  std::memcpy(raw.bytes, flat.ptr, size);
  return raw;
}

void schedule(PyHandlerContext& c, EntityId target, double time, EventKind kind,
              const py::object& payload) {
  Context& ctx = c.get();
  const RawPayload raw = to_payload(*c.model, payload);
  try {
    ctx.schedule(target, time, kind, raw);
  } catch (...) {
    c.model->set_pending(std::current_exception());
    throw;
  }
}

void request_decision(PyHandlerContext& c) {
  Context& ctx = c.get();
  try {
    ctx.request_decision();
  } catch (...) {
    c.model->set_pending(std::current_exception());
    throw;
  }
}

Context& rng_context(const PyHandlerRng& r) { return r.ctx->get(); }

}  // namespace

void bind_python_model(py::module_& m) {
  py::class_<PyHandlerContext>(m, "HandlerContext",
                               "What a PythonModel handler may do: the runtime's Context.")
      .def_property_readonly("now", [](const PyHandlerContext& c) { return c.get().now(); },
                             "Simulated time of this handler.")
      .def_property_readonly("self", [](const PyHandlerContext& c) { return c.get().self(); },
                             "The entity this handler runs for.")
      .def_property_readonly("rng",
                             [](const PyHandlerContext& c) {
                               c.get();
                               return c.model->rng_object();
                             },
                             "This entity's random stream (Philox4x64, as in C++).")
      .def_property_readonly("snapshot",
                             [](const PyHandlerContext& c) {
                               c.get();
                               return c.model->snapshot_view();
                             },
                             "Read-only public records of every entity at the last boundary.")
      .def("schedule", &schedule, py::arg("target"), py::arg("time"), py::arg("kind"),
           py::arg("payload") = py::none(),
           "Schedule `kind` for `target` at `time` (>= now for self, >= now + lookahead for "
           "others) with an optional payload record (<= 64 bytes).")
      .def("request_decision", &request_decision,
           "Ask for this agent's next action (a model with decisions = True): the agent waits "
           "from now, its later events held, until on_action runs with the action at this "
           "time.");

  py::class_<PyHandlerRng>(m, "HandlerRng", "The handler entity's own random stream.")
      .def("uniform", [](const PyHandlerRng& r) { return rng_context(r).rng().uniform(); })
      .def("exponential",
           [](const PyHandlerRng& r, double mean) { return rng_context(r).rng().exponential(mean); },
           py::arg("mean"))
      .def("below",
           [](const PyHandlerRng& r, std::uint64_t n) {
             if (n == 0) throw std::invalid_argument("n must be >= 1, got 0");
             return rng_context(r).rng().below(n);
           },
           py::arg("n"))
      .def("next_u64", [](const PyHandlerRng& r) { return rng_context(r).rng().next_u64(); });

  py::class_<PyHandlerEvent>(m, "HandlerEvent", "The event an on_event handler handles.")
      .def_property_readonly("time", [](const PyHandlerEvent& e) { return e.event.time; })
      .def_property_readonly("target", [](const PyHandlerEvent& e) { return e.event.target; })
      .def_property_readonly("source", [](const PyHandlerEvent& e) { return e.event.source; })
      .def_property_readonly("seq", [](const PyHandlerEvent& e) { return e.event.seq; })
      .def_property_readonly("kind", [](const PyHandlerEvent& e) { return e.event.kind; })
      .def_property_readonly(
          "payload",
          [](const PyHandlerEvent& e) -> py::object {
            py::bytes raw(reinterpret_cast<const char*>(e.event.payload), kPayloadBytes);
            const py::object& dtype = e.payload_dtype;
            if (dtype.is_none()) return raw;
            return py::module_::import("numpy")
                .attr("frombuffer")(raw, dtype, 1)
                .attr("__getitem__")(0);
          },
          "The payload record (payload_dtype), or 64 raw bytes without one.")
      .def("__repr__", [](const PyHandlerEvent& e) {
        return "<HandlerEvent kind=" + std::to_string(e.event.kind) +
               " time=" + std::to_string(e.event.time) +
               " source=" + std::to_string(e.event.source) + ">";
      });
}

}  // namespace seer::bindings
