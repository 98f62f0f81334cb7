// Building the dict API's dicts with the CPython API: items stored with their
// references' ownership explicit, dicts presized for their items, and the
// cyclic GC paused while thousands of containers are made.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>

#include "dicts/dict_entries.hpp"

namespace seer::bindings {

// Pauses the cyclic GC while thousands of (acyclic) containers are built:
// otherwise a collection runs every ~700 allocations (~2 ms per 4096-agent step).
class GcPause {
 public:
  GcPause() : was_enabled_(PyGC_Disable() != 0) {}
  ~GcPause() {
    if (was_enabled_) PyGC_Enable();
  }
  GcPause(const GcPause&) = delete;
  GcPause& operator=(const GcPause&) = delete;

 private:
  bool was_enabled_;
};

inline void set_item(PyObject* dict, PyObject* key, pybind11::object value) {
  if (PyDict_SetItem(dict, key, value.ptr()) != 0) throw pybind11::error_already_set();
}

// Stores a new reference (stolen) under `key`.
inline void set_new(PyObject* dict, PyObject* key, PyObject* value) {
  if (value == nullptr) throw pybind11::error_already_set();
  const int failed = PyDict_SetItem(dict, key, value);
  Py_DECREF(value);
  if (failed != 0) throw pybind11::error_already_set();
}

// Stores a borrowed reference under `key` (the dict takes its own).
inline void set_borrowed(PyObject* dict, PyObject* key, PyObject* value) {
  if (PyDict_SetItem(dict, key, value) != 0) throw pybind11::error_already_set();
}

// A dict for `n` str-keyed items. Presized (no resizing while it fills),
// unless its items can be read in place: CPython presizes into a general
// table, which dict_entries() does not read; an empty dict grows a str-keyed one.
inline pybind11::dict presized_dict(std::size_t n) {
#if PY_VERSION_HEX < 0x030D0000
  if (dict_entries_enabled()) return pybind11::dict();
  PyObject* d = _PyDict_NewPresized(static_cast<Py_ssize_t>(n));
  if (d == nullptr) throw pybind11::error_already_set();
  return pybind11::reinterpret_steal<pybind11::dict>(d);
#else
  (void)n;
  return pybind11::dict();
#endif
}

}  // namespace seer::bindings
