// seer_env._core.DictBridge: the PettingZoo dict API's per-agent work in C++.
//
// A dict step of a 4096-agent env built ~4096 x 7 Python objects through the
// interpreter (~3 ms, more than the parallel step itself). Here the same
// objects are built with the CPython API in one call: keys are the env's own
// agent-name and info-key strings (interned once), values are today's types
// (float32 row views of a fresh observation array, float, bool, int).
//
// Actions: a fast path only. A well-formed action dict (exactly the live
// agents; Discrete: Python/NumPy integers in range; Box: float32/float64
// vectors of the right size, finite, in bounds) becomes the action array
// here; anything else returns None and the env's Python checker handles it
// (and words the error), so there is one checker.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

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

py::object steal(PyObject* p) {
  if (p == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(p);
}

void set_item(PyObject* dict, PyObject* key, py::object value) {
  if (PyDict_SetItem(dict, key, value.ptr()) != 0) throw py::error_already_set();
}

// Stores a new reference (stolen) under `key`.
void set_new(PyObject* dict, PyObject* key, PyObject* value) {
  if (value == nullptr) throw py::error_already_set();
  const int failed = PyDict_SetItem(dict, key, value);
  Py_DECREF(value);
  if (failed != 0) throw py::error_already_set();
}

// Stores a borrowed reference under `key` (the dict takes its own).
void set_borrowed(PyObject* dict, PyObject* key, PyObject* value) {
  if (PyDict_SetItem(dict, key, value) != 0) throw py::error_already_set();
}

// A dict with room for `n` items (no resizing while it fills).
py::dict presized_dict(std::size_t n) {
#if PY_VERSION_HEX < 0x030D0000
  PyObject* d = _PyDict_NewPresized(static_cast<Py_ssize_t>(n));
  if (d == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::dict>(d);
#else
  (void)n;
  return py::dict();
#endif
}

// Row views of a 2-D array: made with NumPy's constructor directly (a third
// of the cost of `obs[i]`, which parses an index first).
class RowViews {
 public:
  explicit RowViews(const py::array& base)
      : api_(py::detail::npy_api::get()),
        base_(base),
        descr_(base.dtype()),
        dim_(base.shape(1)),
        stride_(base.strides(1)),
        row_stride_(base.strides(0)),
        data_(static_cast<char*>(const_cast<void*>(base.data()))),
        flags_(base.writeable() ? py::detail::npy_api::NPY_ARRAY_WRITEABLE_ : 0) {}

  PyObject* row(std::ptrdiff_t i) const {
    Py_INCREF(descr_.ptr());  // stolen by the constructor
    PyObject* view = api_.PyArray_NewFromDescr_(api_.PyArray_Type_, descr_.ptr(), 1, &dim_,
                                                &stride_, data_ + i * row_stride_, flags_,
                                                nullptr);
    if (view == nullptr) throw py::error_already_set();
    Py_INCREF(base_.ptr());  // stolen by SetBaseObject: the view keeps the array alive
    if (api_.PyArray_SetBaseObject_(view, base_.ptr()) != 0) {
      Py_DECREF(view);
      throw py::error_already_set();
    }
    return view;
  }

 private:
  const py::detail::npy_api& api_;
  const py::array& base_;
  py::dtype descr_;
  Py_intptr_t dim_, stride_, row_stride_;
  char* data_;
  int flags_;
};

class DictBridge {
 public:
  DictBridge(const py::list& names, const py::list& info_keys, bool discrete,
             std::size_t act_dim, std::int64_t act_n, double low, double high)
      : discrete_(discrete), act_dim_(act_dim), act_n_(act_n), low_(low), high_(high) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      py::object name = intern(names[i]);
      set_item(index_.ptr(), name.ptr(), py::int_(i));
    }
    for (auto key : info_keys) {
      py::object k = intern(py::reinterpret_borrow<py::object>(key));
      info_keys_.push_back(k);
      set_item(info_template_.ptr(), k.ptr(), py::int_(0));
    }
    num_agents_ = names.size();
  }

  // (actions, alive or None) for Simulation.step, or None: not the fast case.
  py::object actions(const py::dict& given, const py::list& live) {
    const std::size_t count = live.size();
    if (static_cast<std::size_t>(PyDict_Size(given.ptr())) != count) return py::none();
    const std::size_t n = num_agents_;
    const auto rows = static_cast<py::ssize_t>(n);
    py::array arr = discrete_ ? py::array(py::array_t<std::int64_t>(rows))
                              : py::array(py::array_t<float>(
                                    {rows, static_cast<py::ssize_t>(act_dim_)}));
    std::memset(arr.mutable_data(), 0, static_cast<std::size_t>(arr.nbytes()));
    py::array_t<std::uint8_t> alive(n);
    std::uint8_t* alive_ptr = alive.mutable_data();
    std::memset(alive_ptr, 0, n);
    auto* ints = discrete_ ? static_cast<std::int64_t*>(arr.mutable_data()) : nullptr;
    auto* floats = discrete_ ? nullptr : static_cast<float*>(arr.mutable_data());
    for (std::size_t j = 0; j < count; ++j) {
      PyObject* name = PyList_GET_ITEM(live.ptr(), j);
      const std::ptrdiff_t i = count == n ? static_cast<std::ptrdiff_t>(j) : index_of(name);
      PyObject* value = PyDict_GetItemWithError(given.ptr(), name);
      if (i < 0 || value == nullptr) {
        if (PyErr_Occurred()) throw py::error_already_set();
        return py::none();
      }
      alive_ptr[i] = 1;
      const bool ok = discrete_ ? discrete_action(value, ints + i)
                                : box_action(value, floats + i * act_dim_);
      if (!ok) return py::none();
    }
    if (count == n) return py::make_tuple(arr, py::none());
    return py::make_tuple(arr, alive);
  }

  // The five step dicts keyed by `live` (in its order) and the agents left.
  py::tuple step_outputs(const py::list& live, const py::array& obs, const py::array& rewards,
                         const py::array& terms, const py::array& truncs, const py::array& infos,
                         bool truncate_all) {
    const auto rew = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(rewards);
    const auto te = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(terms);
    const auto tr = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(truncs);
    require_rows(rew, "rewards");
    require_rows(te, "terminations");
    require_rows(tr, "truncations");
    const auto table = info_table(infos);
    const RowViews rows(observation_array(obs));
    const std::size_t count = live.size();
    GcPause pause;
    py::dict obs_d = presized_dict(count), rew_d = presized_dict(count),
             term_d = presized_dict(count), trunc_d = presized_dict(count),
             info_d = presized_dict(count);
    py::list next;
    const double* rew_ptr = rew.data();
    const bool* te_ptr = te.data();
    const bool* tr_ptr = tr.data();
    for (std::size_t j = 0; j < count; ++j) {
      PyObject* name = PyList_GET_ITEM(live.ptr(), j);
      const std::ptrdiff_t i = row_of(live, j);
      const bool t = te_ptr[i];
      const bool u = truncate_all || tr_ptr[i];
      set_new(obs_d.ptr(), name, rows.row(i));
      set_new(rew_d.ptr(), name, PyFloat_FromDouble(rew_ptr[i]));
      set_borrowed(term_d.ptr(), name, t ? Py_True : Py_False);
      set_borrowed(trunc_d.ptr(), name, u ? Py_True : Py_False);
      set_new(info_d.ptr(), name, info_dict(table.data() + i * info_keys_.size()));
      if (!(t || u) && PyList_Append(next.ptr(), name) != 0) throw py::error_already_set();
    }
    return py::make_tuple(obs_d, rew_d, term_d, trunc_d, info_d, next);
  }

  // reset(): (observations, infos) keyed by `live`.
  py::tuple reset_outputs(const py::list& live, const py::array& obs, const py::array& infos) {
    const auto table = info_table(infos);
    const RowViews rows(observation_array(obs));
    const std::size_t count = live.size();
    GcPause pause;
    py::dict obs_d = presized_dict(count), info_d = presized_dict(count);
    for (std::size_t j = 0; j < count; ++j) {
      PyObject* name = PyList_GET_ITEM(live.ptr(), j);
      const std::ptrdiff_t i = row_of(live, j);
      set_new(obs_d.ptr(), name, rows.row(i));
      set_new(info_d.ptr(), name, info_dict(table.data() + i * info_keys_.size()));
    }
    return py::make_tuple(obs_d, info_d);
  }

 private:
  static py::object intern(py::object s) {
    if (!PyUnicode_Check(s.ptr())) throw py::type_error("names must be str");
    PyObject* p = s.release().ptr();
    PyUnicode_InternInPlace(&p);
    return py::reinterpret_steal<py::object>(p);
  }

  std::ptrdiff_t index_of(PyObject* name) const {
    PyObject* i = PyDict_GetItemWithError(index_.ptr(), name);
    if (i == nullptr) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return -1;
    }
    return PyLong_AsSsize_t(i);
  }

  std::ptrdiff_t require_index(PyObject* name) const {
    const std::ptrdiff_t i = index_of(name);
    if (i < 0) {
      throw std::invalid_argument("unknown agent " + std::string(py::repr(py::handle(name))));
    }
    return i;
  }

  template <class A>
  void require_rows(const A& a, const char* what) const {
    if (!a || static_cast<std::size_t>(a.size()) != num_agents_) {
      throw std::invalid_argument(std::string(what) + " must have one value per agent");
    }
  }

  // The row of live[j]: j itself when every agent is live (``agents`` keeps
  // the order of ``possible_agents``), else looked up.
  std::ptrdiff_t row_of(const py::list& live, std::size_t j) const {
    if (live.size() == num_agents_) return static_cast<std::ptrdiff_t>(j);
    return require_index(PyList_GET_ITEM(live.ptr(), j));
  }

  // The observation rows become views of `obs`: it comes fresh from
  // Simulation.observations() each step, so no view aliases what the next
  // step writes.
  const py::array& observation_array(const py::array& obs) const {
    if (obs.ndim() != 2 || static_cast<std::size_t>(obs.shape(0)) != num_agents_) {
      throw std::invalid_argument("observations must have one row per agent");
    }
    return obs;
  }

  py::array_t<std::int64_t> info_table(const py::array& infos) const {
    auto table = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(infos);
    if (!table || static_cast<std::size_t>(table.size()) != num_agents_ * info_keys_.size()) {
      throw std::invalid_argument("infos must be int64[num_agents, num_info_keys]");
    }
    return table;
  }

  // A new {info_key: int} dict: a copy of the {info_key: 0} template (the
  // copy reuses the key table: no hashing, no resizing), then the nonzero
  // values (most per-step counters are 0).
  PyObject* info_dict(const std::int64_t* row) const {
    PyObject* d = PyDict_Copy(info_template_.ptr());
    if (d == nullptr) throw py::error_already_set();
    for (std::size_t c = 0; c < info_keys_.size(); ++c) {
      if (row[c] == 0) continue;
      PyObject* v = PyLong_FromLongLong(row[c]);
      if (v == nullptr || PyDict_SetItem(d, info_keys_[c].ptr(), v) != 0) {
        Py_XDECREF(v);
        Py_DECREF(d);
        throw py::error_already_set();
      }
      Py_DECREF(v);
    }
    return d;
  }

  bool discrete_action(PyObject* value, std::int64_t* out) const {
    if (PyBool_Check(value) || PyFloat_Check(value)) return false;
    py::object index;
    PyObject* as_int = value;
    if (!PyLong_CheckExact(value)) {
      if (!PyIndex_Check(value)) return false;
      as_int = PyNumber_Index(value);
      if (as_int == nullptr) {
        PyErr_Clear();
        return false;
      }
      index = py::reinterpret_steal<py::object>(as_int);
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
    const auto& api = py::detail::npy_api::get();
    if (!api.PyArray_Check_(value)) return false;
    const auto arr = py::reinterpret_borrow<py::array>(value);
    if (arr.ndim() != 1 || static_cast<std::size_t>(arr.shape(0)) != act_dim_) return false;
    const float low = static_cast<float>(low_), high = static_cast<float>(high_);
    const auto* base = static_cast<const char*>(arr.data());
    const py::ssize_t stride = arr.strides(0);
    const bool f32 = py::array_t<float>::check_(arr);
    const bool f64 = !f32 && py::array_t<double>::check_(arr);
    if (!f32 && !f64) return false;
    for (std::size_t c = 0; c < act_dim_; ++c) {
      const char* p = base + static_cast<py::ssize_t>(c) * stride;
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
  std::size_t num_agents_ = 0;
  py::dict index_;          // agent name -> row
  py::dict info_template_;  // {info_key: 0}
  std::vector<py::object> info_keys_;
};

}  // namespace

void bind_dicts(py::module_& m) {
  py::class_<DictBridge>(m, "DictBridge",
                         "Builds the PettingZoo dict API's per-agent objects in C++ (private).")
      .def(py::init<const py::list&, const py::list&, bool, std::size_t, std::int64_t, double,
                    double>(),
           py::arg("names"), py::arg("info_keys"), py::arg("discrete"), py::arg("act_dim"),
           py::arg("act_n"), py::arg("low"), py::arg("high"))
      .def("actions", &DictBridge::actions, py::arg("actions"), py::arg("live"),
           "(actions, alive or None) from a well-formed action dict, else None.")
      .def("step_outputs", &DictBridge::step_outputs, py::arg("live"), py::arg("obs"),
           py::arg("rewards"), py::arg("terminations"), py::arg("truncations"), py::arg("infos"),
           py::arg("truncate_all"),
           "(obs, rewards, terminations, truncations, infos) dicts keyed by live, and the "
           "agents left.")
      .def("reset_outputs", &DictBridge::reset_outputs, py::arg("live"), py::arg("obs"),
           py::arg("infos"), "(observations, infos) dicts keyed by live.");
}

}  // namespace seer::bindings
