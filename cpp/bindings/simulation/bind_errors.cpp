// Maps the runtime's C++ exceptions to Python exceptions that carry the
// entity, kind and times as attributes.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "seer/errors.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

// Raises `type(message)` with extra attributes set on the instance.
void raise_with(const char* type_name, const char* message, const py::dict& attrs) {
  py::object type = py::module_::import("seer_env._core").attr(type_name);
  py::object instance = type(message);
  for (auto item : attrs) instance.attr(item.first) = item.second;
  PyErr_SetObject(type.ptr(), instance.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  py::object runtime_error = py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
  m.attr("ContractViolation") = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "seer_env.ContractViolation",
      "A model broke the event-locality contract. Attributes: entity, kind, time, target, "
      "event_time.",
      runtime_error.ptr(), nullptr));
  m.attr("HandlerError") = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "seer_env.HandlerError",
      "A model handler raised. Attributes: entity, kind, time. The env needs reset().",
      runtime_error.ptr(), nullptr));
  m.attr("EventBudgetExceeded") = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "seer_env.EventBudgetExceeded",
      "A step handled more events than its event budget (a runaway cascade?).",
      runtime_error.ptr(), nullptr));

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ContractViolation& e) {
      py::dict attrs;
      attrs["entity"] = e.entity;
      attrs["kind"] = e.kind;
      attrs["time"] = e.time;
      attrs["target"] = e.target;
      attrs["event_time"] = e.event_time;
      raise_with("ContractViolation", e.what(), attrs);
    } catch (const HandlerError& e) {
      py::dict attrs;
      attrs["entity"] = e.entity;
      attrs["kind"] = e.kind;
      attrs["time"] = e.time;
      raise_with("HandlerError", e.what(), attrs);
    } catch (const EventBudgetExceeded& e) {
      raise_with("EventBudgetExceeded", e.what(), py::dict());
    } catch (const Interrupted& e) {
      // Run Python's SIGINT handler now (KeyboardInterrupt by default; see
      // interrupt.hpp). If it did not raise, or no signal was pending
      // (request_interrupt()), the step still stopped: say so.
      if (PyErr_CheckSignals() != 0) return;
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });
}

}  // namespace seer::bindings
