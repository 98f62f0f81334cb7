// The dict API's actions, a fast path only: a well-formed action dict (every
// live agent, perhaps agents that are done too, whose actions are ignored;
// Discrete: Python/NumPy integers in range; Box: float32/float64 vectors of
// the right size, finite, in bounds) becomes the action array here; anything
// else returns None and the env's Python checker handles it (and words the
// error), so there is one checker.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dicts/agent_rows.hpp"

namespace seer::bindings {

class ActionReader {
 public:
  ActionReader(bool discrete, std::size_t act_dim, std::int64_t act_n, double low, double high)
      : discrete_(discrete), act_dim_(act_dim), act_n_(act_n), low_(low), high_(high) {}

  // (actions, alive or None) for Simulation.step, or None: not the fast case.
  pybind11::object actions(const pybind11::dict& given, const pybind11::list& live,
                           const AgentRows& agents) const {
    const std::size_t count = live.size();
    const auto size = static_cast<std::size_t>(PyDict_Size(given.ptr()));
    if (size < count) return pybind11::none();  // a live agent left out: the checker decides
    const std::size_t n = agents.size();
    const auto rows = static_cast<pybind11::ssize_t>(n);
    pybind11::array arr = discrete_ ? pybind11::array(pybind11::array_t<std::int64_t>(rows))
                                    : pybind11::array(pybind11::array_t<float>(
                                          {rows, static_cast<pybind11::ssize_t>(act_dim_)}));
    std::memset(arr.mutable_data(), 0, static_cast<std::size_t>(arr.nbytes()));
    pybind11::array_t<std::uint8_t> alive(n);
    std::uint8_t* alive_ptr = alive.mutable_data();
    std::memset(alive_ptr, 0, n);
    auto* ints = discrete_ ? static_cast<std::int64_t*>(arr.mutable_data()) : nullptr;
    auto* floats = discrete_ ? nullptr : static_cast<float*>(arr.mutable_data());
    // A dict built from env.agents holds live's own name objects in live's
    // order: walk it (no hashing). From the first key that differs, look the
    // remaining agents up. With exactly `count` keys, finding every live agent
    // means it holds nothing else; more keys must all be agents' (those of
    // agents that are done are ignored, unread).
    Py_ssize_t pos = 0;
    bool in_order = true;
    for (std::size_t j = 0; j < count; ++j) {
      PyObject* name = PyList_GET_ITEM(live.ptr(), j);
      PyObject* key = nullptr;
      PyObject* value = nullptr;
      if (in_order) in_order = PyDict_Next(given.ptr(), &pos, &key, &value) && key == name;
      if (!in_order) value = PyDict_GetItemWithError(given.ptr(), name);
      const std::ptrdiff_t i = agents.row_of(name, j);
      // Not a live agent's action, or `live` names an agent twice or one that
      // does not exist: the Python checker words it.
      if (i < 0 || value == nullptr || alive_ptr[i] != 0) {
        if (PyErr_Occurred()) throw pybind11::error_already_set();
        return pybind11::none();
      }
      alive_ptr[i] = 1;
      const bool ok =
          discrete_ ? discrete_action(value, ints + i) : box_action(value, floats + i * act_dim_);
      if (!ok) return pybind11::none();
    }
    if (size > count) {
      Py_ssize_t at = 0;
      PyObject* key = nullptr;
      PyObject* value = nullptr;
      while (PyDict_Next(given.ptr(), &at, &key, &value)) {
        if (agents.index_of(key) < 0) return pybind11::none();  // no agent's: the checker names it
      }
    }
    if (count == n) return pybind11::make_tuple(arr, pybind11::none());
    return pybind11::make_tuple(arr, alive);
  }

 private:
  bool discrete_action(PyObject* value, std::int64_t* out) const {
    if (PyBool_Check(value) || PyFloat_Check(value)) return false;
    pybind11::object index;
    PyObject* as_int = value;
    if (!PyLong_CheckExact(value)) {
      if (!PyIndex_Check(value)) return false;
      as_int = PyNumber_Index(value);
      if (as_int == nullptr) {
        PyErr_Clear();
        return false;
      }
      index = pybind11::reinterpret_steal<pybind11::object>(as_int);
    }
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(as_int, &overflow);
    if (overflow != 0 || (x == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    if (x < 0 || x >= act_n_) return false;
    *out = x;
    return true;
  }

  // A float32/float64 vector of act_dim_ values, finite and inside the Box
  // after the cast to float32 (the Python checker's order).
  bool box_action(PyObject* value, float* out) const {
    const auto& api = pybind11::detail::npy_api::get();
    if (!api.PyArray_Check_(value)) return false;
    const auto arr = pybind11::reinterpret_borrow<pybind11::array>(value);
    if (arr.ndim() != 1 || static_cast<std::size_t>(arr.shape(0)) != act_dim_) return false;
    const float low = static_cast<float>(low_), high = static_cast<float>(high_);
    const auto* base = static_cast<const char*>(arr.data());
    const pybind11::ssize_t stride = arr.strides(0);
    const bool f32 = pybind11::array_t<float>::check_(arr);
    const bool f64 = !f32 && pybind11::array_t<double>::check_(arr);
    if (!f32 && !f64) return false;
    for (std::size_t c = 0; c < act_dim_; ++c) {
      const char* p = base + static_cast<pybind11::ssize_t>(c) * stride;
      const float x = f32 ? *reinterpret_cast<const float*>(p)
                          : static_cast<float>(*reinterpret_cast<const double*>(p));
      if (!std::isfinite(x) || x < low || x > high) return false;
      out[c] = x;
    }
    return true;
  }

  bool discrete_;
  std::size_t act_dim_;
  std::int64_t act_n_;
  double low_, high_;
};

}  // namespace seer::bindings
