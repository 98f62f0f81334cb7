// dict_entries(): see dict_entries.hpp. The layout mirrored here is CPython's
// own (Include/internal/pycore_dict.h, 3.11-3.13), checked at first use.
#include "dicts/dict_entries.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace seer::bindings {
namespace {

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#define SEER_DICT_LAYOUT 1

// struct _dictkeysobject (dk_*), without the index table and entries that follow.
struct KeysHeader {
  Py_ssize_t refcnt;
  std::uint8_t log2_size;
  std::uint8_t log2_index_bytes;
  std::uint8_t kind;
  std::uint32_t version;
  Py_ssize_t usable;
  Py_ssize_t nentries;
  char indices[1];  // 1 << log2_index_bytes bytes, then the entries
};
constexpr std::uint8_t kUnicodeKeys = 1;  // DICT_KEYS_UNICODE: str keys, {key, value} entries

// PyDictObject.ma_version_tag (deprecated from 3.12, still kept up to date there).
std::uint64_t tag_of(PyObject* d) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return reinterpret_cast<PyDictObject*>(d)->ma_version_tag;
#pragma GCC diagnostic pop
}

DictEntry* entries_of(PyObject* d) {
  auto* dict = reinterpret_cast<PyDictObject*>(d);
  if (dict->ma_values != nullptr) return nullptr;  // a split table
#if PY_VERSION_HEX >= 0x030C0000
  // From 3.12 the tag's low byte holds watcher bits: a watched dict must hear of changes.
  if ((tag_of(d) & 0xFF) != 0) return nullptr;
#endif
  auto* keys = reinterpret_cast<KeysHeader*>(dict->ma_keys);
  // Every entry live (no deleted item left a hole), all keys str.
  if (keys->kind != kUnicodeKeys || keys->nentries != dict->ma_used) return nullptr;
  return reinterpret_cast<DictEntry*>(keys->indices + (std::size_t{1} << keys->log2_index_bytes));
}

// True when entries_of() agrees with the public API on `d` (n str keys).
bool agrees(PyObject* d, Py_ssize_t n) {
  DictEntry* e = entries_of(d);
  if (e == nullptr || PyDict_GET_SIZE(d) != n) return false;
  Py_ssize_t pos = 0, j = 0;
  PyObject *key, *value;
  for (; PyDict_Next(d, &pos, &key, &value); ++j) {
    if (j >= n || e[j].key != key || e[j].value != value) return false;
  }
  return j == n;
}

// Each call to `change` gives `d` a new version tag.
template <class Change>
bool retags(PyObject* d, Change change) {
  const std::uint64_t before = tag_of(d);
  return change() && before != 0 && tag_of(d) != 0 && tag_of(d) != before;
}

// One dict of `n` str keys, checked as built, as copied, after a value
// replaced through the entries (its tag kept), after a value set through the
// API (a new tag), and after a deletion (a new tag, no longer answered).
bool check_dict_of(Py_ssize_t n) {
  PyObject* d = PyDict_New();
  if (d == nullptr) return false;
  std::vector<PyObject*> keys;
  bool ok = true;
  for (Py_ssize_t i = 0; i < n && ok; ++i) {
    PyObject* key = PyUnicode_FromString(("seer_layout_" + std::to_string(i)).c_str());
    PyObject* value = PyLong_FromSsize_t(100000 + i);
    ok = key != nullptr && value != nullptr && PyDict_SetItem(d, key, value) == 0;
    Py_XDECREF(value);
    if (key != nullptr) keys.push_back(key);
  }
  ok = ok && agrees(d, n);
  PyObject* copy = ok ? PyDict_Copy(d) : nullptr;
  ok = ok && copy != nullptr && agrees(copy, n);
  if (ok) {
    PyObject* marker = PyLong_FromSsize_t(-424242);
    ok = marker != nullptr;
    if (ok) {
      const Py_ssize_t j = n / 2;
      const std::uint64_t tag = tag_of(copy);
      replace_value(entries_of(copy)[j], marker);  // stolen
      ok = PyDict_GetItemWithError(copy, keys[j]) == marker &&
           PyDict_GetItemWithError(d, keys[j]) != marker && agrees(copy, n) &&
           tag_of(copy) == tag && tag != tag_of(d);
    }
  }
  ok = ok && retags(copy, [&] { return PyDict_SetItem(copy, keys[0], Py_None) == 0; });
  ok = ok && retags(copy, [&] { return PyDict_DelItem(copy, keys[0]) == 0; }) &&
       entries_of(copy) == nullptr;
  Py_XDECREF(copy);
  Py_DECREF(d);
  for (PyObject* key : keys) Py_DECREF(key);
  if (PyErr_Occurred()) PyErr_Clear();
  return ok;
}

bool layout_holds() {
  // 1-, 2-byte index tables (8 and 512 slots); the bridge's dicts are 6 and 4096 items.
  for (Py_ssize_t n : {1, 6, 300}) {
    if (!check_dict_of(n)) return false;
  }
  PyObject* general = Py_BuildValue("{i:i}", 1, 2);  // a non-str key: never answered
  const bool refused = general != nullptr && entries_of(general) == nullptr;
  Py_XDECREF(general);
  if (PyErr_Occurred()) PyErr_Clear();
  return refused;
}
#endif

struct State {
  bool checked = false;
  bool holds = false;
  bool enabled = true;
};

State& state() {
  static State s;  // used with the GIL held
  if (!s.checked) {
    s.checked = true;
#ifdef SEER_DICT_LAYOUT
    s.holds = layout_holds();
#endif
  }
  return s;
}

}  // namespace

DictEntry* dict_entries(PyObject* d) {
#ifdef SEER_DICT_LAYOUT
  if (dict_entries_enabled()) return entries_of(d);
#endif
  (void)d;
  return nullptr;
}

std::uint64_t dict_version(PyObject* d) {
#ifdef SEER_DICT_LAYOUT
  if (dict_entries_enabled()) return tag_of(d);
#endif
  (void)d;
  return 0;
}

bool dict_entries_enabled() {
  const State& s = state();
  return s.holds && s.enabled;
}

void enable_dict_entries(bool use) { state().enabled = use; }

}  // namespace seer::bindings
