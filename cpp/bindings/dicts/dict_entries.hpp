// Direct access to the items of a dict the dict bridge owns.
//
// Refilling a step's 4096 info dicts through PyDict_Next and PyDict_SetItem
// cost ~0.15 us per agent (seven calls and a hash lookup per changed counter,
// each dict a few cache lines away from the last): most of the dict API's
// cost over the array API. CPython 3.11-3.13 keep a dict whose keys are all
// str in one block: an index table followed by its {key, value} pairs in
// iteration order. Read there, a value is one load and replacing it one store.
//
// That block's layout is private to CPython, so it is used only when
//  - this module was built for CPython 3.11-3.13 without free threading, and
//  - a check at first use finds the items exactly where the public API says
//    they are (PyDict_Next, PyDict_GetItem; small and large dicts, copies,
//    a value replaced here and read back there),
// and only on dicts nobody else can see (the bridge checks the reference
// count first). Everywhere else dict_entries() answers nullptr and the
// caller takes the public API.
#pragma once

#include <Python.h>

#include <cstdint>

namespace seer::bindings {

struct DictEntry {
  PyObject* key;
  PyObject* value;
};

// The items of `d`, an exact dict, as PyDict_GET_SIZE(d) consecutive pairs in
// iteration order; nullptr when the layout is not in use or `d` is not kept
// that way (split table, a non-str key, a deleted item, a watched dict).
DictEntry* dict_entries(PyObject* d);

// Puts `value` (a new reference: stolen) in `entry` and releases the old one.
// The dict must be one nobody else can see (no version tag or watcher is told).
inline void replace_value(DictEntry& entry, PyObject* value) {
  PyObject* old = entry.value;
  entry.value = value;
  Py_DECREF(old);
}

// The version tag of `d`, an exact dict (PEP 509: a new value, never seen
// before, whenever anyone changes the dict through the C API or Python;
// replace_value() does not), or 0 when the layout is not in use.
std::uint64_t dict_version(PyObject* d);

// Whether dict_entries() may answer (the layout check passed and it is not
// switched off); `use` false switches it off, true back on if the check passed.
bool dict_entries_enabled();
void enable_dict_entries(bool use);

}  // namespace seer::bindings
