// The dict API's agents: the row of each agent name (its index in
// possible_agents), found by identity while `live` (the user's `env.agents`)
// keeps possible_agents' order, and looked up by name otherwise (a caller may
// reorder `env.agents`). Names are interned once; the objects possible_agents
// held (maybe not the interned ones) match by identity too.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dicts/dict_building.hpp"

namespace seer::bindings {

class AgentRows {
 public:
  explicit AgentRows(const pybind11::list& names) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      given_.push_back(names[i]);
      pybind11::object name = intern(names[i]);
      set_item(index_.ptr(), name.ptr(), pybind11::int_(i));
      names_.push_back(name);
    }
    num_agents_ = names.size();
  }

  std::size_t size() const { return num_agents_; }
  // agent name -> row, the dict this object looks names up in (the env
  // shares it instead of holding a second one of every agent).
  const pybind11::dict& index() const { return index_; }

  // None when `live` is possible_agents itself, in order (the same name
  // objects: no hashing), else the row of each live agent, int64 in live's
  // order. ValueError when it names an agent twice or one that does not exist:
  // `env.agents` is the user's list and may have been changed in any way.
  pybind11::object live_rows(const pybind11::list& live) const {
    const std::size_t count = live.size();
    bool identical = count == num_agents_;
    for (std::size_t j = 0; identical && j < count; ++j) {
      PyObject* name = PyList_GET_ITEM(live.ptr(), j);
      identical = name == names_[j].ptr() || name == given_[j].ptr();
    }
    if (identical) return pybind11::none();
    pybind11::array_t<std::int64_t> rows(static_cast<pybind11::ssize_t>(count));
    std::int64_t* out = rows.mutable_data();
    std::vector<std::uint8_t> seen(num_agents_, 0);
    for (std::size_t j = 0; j < count; ++j) {
      PyObject* name = PyList_GET_ITEM(live.ptr(), j);
      const std::ptrdiff_t i = PyUnicode_Check(name) ? index_of(name) : -1;
      if (i < 0) {
        throw std::invalid_argument("env.agents holds " + shown(name) +
                                    ", which is not one of possible_agents");
      }
      if (seen[static_cast<std::size_t>(i)] != 0) {
        throw std::invalid_argument("env.agents holds " + shown(name) + " twice");
      }
      seen[static_cast<std::size_t>(i)] = 1;
      out[j] = i;
    }
    return std::move(rows);
  }

  // `name`'s row, or -1 when it is no agent's.
  std::ptrdiff_t index_of(PyObject* name) const {
    PyObject* i = PyDict_GetItemWithError(index_.ptr(), name);
    if (i == nullptr) {
      if (PyErr_Occurred()) throw pybind11::error_already_set();
      return -1;
    }
    return PyLong_AsSsize_t(i);
  }

  // The row of live[j] == `name`: j itself when it is possible_agents[j]
  // (the common case: `live` in possible_agents' order), else looked up by
  // name (a caller may reorder `env.agents`); -1 when it is no agent's.
  std::ptrdiff_t row_of(PyObject* name, std::size_t j) const {
    if (j < names_.size() && (name == names_[j].ptr() || name == given_[j].ptr())) {
      return static_cast<std::ptrdiff_t>(j);
    }
    return index_of(name);
  }

  // rows[j]: the row of live[j], by name (row_of: no lookup while `live`
  // keeps possible_agents' order); std::invalid_argument naming one that is
  // no agent's.
  void locate(const pybind11::list& live, std::vector<std::ptrdiff_t>& rows) const {
    const std::size_t count = live.size();
    rows.resize(count);
    for (std::size_t j = 0; j < count; ++j) {
      PyObject* name = PyList_GET_ITEM(live.ptr(), j);
      rows[j] = row_of(name, j);
      if (rows[j] < 0) require_index(name);  // throws, naming it
    }
  }

  static pybind11::object intern(pybind11::object s) {
    if (!PyUnicode_Check(s.ptr())) throw pybind11::type_error("names must be str");
    PyObject* p = s.release().ptr();
    PyUnicode_InternInPlace(&p);
    return pybind11::reinterpret_steal<pybind11::object>(p);
  }

 private:
  // A name as an error message shows it (only on the way to an error: repr
  // costs more than the lookup it would sit beside).
  static std::string shown(PyObject* name) { return pybind11::repr(pybind11::handle(name)); }

  std::ptrdiff_t require_index(PyObject* name) const {
    const std::ptrdiff_t i = index_of(name);
    if (i < 0) {
      throw std::invalid_argument("unknown agent " +
                                  std::string(pybind11::repr(pybind11::handle(name))));
    }
    return i;
  }

  std::size_t num_agents_ = 0;
  std::vector<pybind11::object> names_;  // possible_agents (interned), by row
  std::vector<pybind11::object> given_;  // the objects possible_agents held (maybe not interned)
  pybind11::dict index_;                 // agent name -> row
};

}  // namespace seer::bindings
