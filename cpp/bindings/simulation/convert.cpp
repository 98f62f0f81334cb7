#include "simulation/convert.hpp"

#include <pybind11/stl.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "executor.hpp"
#include <string>

namespace py = pybind11;

namespace seer::bindings {

py::bytes save_to_bytes(const Simulation& sim) {
  const std::size_t size = sim.save_size();
  py::bytes out = py::reinterpret_steal<py::bytes>(
      PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size)));
  if (!out) throw py::error_already_set();
  char* data = PyBytes_AS_STRING(out.ptr());
  {
    py::gil_scoped_release release;  // `out` is not shared yet: nothing else reads it
    sim.save_into(data, size);
  }
  return out;
}

void load_from_buffer(Simulation& sim, const py::object& blob) {
  Py_buffer view;
  if (PyObject_GetBuffer(blob.ptr(), &view, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    throw std::invalid_argument(
        "blob must be a bytes-like object (bytes, bytearray, memoryview, a contiguous uint8 "
        "array), got " + std::string(py::str(py::type::of(blob).attr("__name__"))));
  }
  // The export pins the buffer (a bytearray cannot resize) until released.
  struct Release {
    Py_buffer* view;
    ~Release() { PyBuffer_Release(view); }
  } release_view{&view};
  py::gil_scoped_release release;
  sim.load(static_cast<const char*>(view.buf), static_cast<std::size_t>(view.len));
}

CallOrderError call_in_progress(const char* what) {
  return CallOrderError(std::string(what) +
                        "() called while another call on this env is in progress (in another "
                        "thread, or from one of the env's own handlers); wait for it to return");
}

namespace {

std::string text_of(const py::handle& value) { return py::str(py::repr(value)); }

// Whether `value` is a Python or NumPy bool (an integer to Python, never a number here).
bool is_bool(const py::handle& value) {
  return PyBool_Check(value.ptr()) ||
         py::isinstance(value, py::module_::import("numpy").attr("bool_"));
}

// The dtype kind of a numpy array ('b' bool, 'i'/'u' integer, 'f' real, ...).
char kind_of(const py::array& array) { return array.dtype().kind(); }

// `value` as a Python int when it is an integer (Python or NumPy, not a bool);
// std::invalid_argument("<must>, got <repr>") otherwise.
py::int_ integer_of(const py::object& value, const std::string& must) {
  if (!py::hasattr(value, "__index__") || py::isinstance<py::bool_>(value)) {
    throw std::invalid_argument(must + ", got " + text_of(value));
  }
  PyObject* index = PyNumber_Index(value.ptr());
  if (index == nullptr) throw py::error_already_set();  // its __index__ raised
  return py::reinterpret_steal<py::int_>(index);
}

// `values` as a one-dimensional NumPy array of `n` values whose dtype kind is
// one of `kinds`; std::invalid_argument("<what>, got dtype|shape ...") otherwise.
py::array array_of(const py::object& values, std::size_t n, const std::string& what,
                   const std::string& kinds) {
  const py::array given = py::module_::import("numpy").attr("asarray")(values);
  if (kinds.find(kind_of(given)) == std::string::npos) {
    throw std::invalid_argument(what + ", got dtype " + std::string(py::str(given.dtype())));
  }
  if (static_cast<std::size_t>(given.size()) != n || given.ndim() != 1) {
    throw std::invalid_argument(what + ", got shape " + text_of(given.attr("shape")));
  }
  return given;
}

// An integer array as int64, checked before any narrowing: an unsigned value
// above 2**63 reads as negative, which every range check here refuses (256
// would become 0 and -1 would become 255 as uint8).
py::array_t<std::int64_t> as_int64(const py::array& given) {
  const py::object wide = kind_of(given) == 'u'
                              ? py::object(given.attr("astype")("uint64").attr("view")("int64"))
                              : py::object(given);
  return py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(wide);
}

}  // namespace

py::dict last_step_dict(const Simulation& sim) {
  const StepStats& s = sim.last_step();
  py::dict d;
  d["events"] = s.events;
  d["cross_events"] = s.cross_events;
  d["rounds"] = s.rounds;
  d["ready"] = s.ready;
  d["queue_reads"] = s.queue_reads;
  d["seconds"] = sim.last_step_seconds();
  d["threads"] = s.threads;
  d["parked_waits"] = s.parked_waits;
  d["thread_decision"] = sim.thread_decision();
  return d;
}

const char* const kLastStepDoc =
    "What the last step did: events, cross_events, rounds, ready (entities the parallel "
    "executor's rounds found ready, summed over rounds; 0 for the serial loop), queue_reads "
    "(entity queue lines it read: each entity's at the step's begin, then the ready ones'), "
    "seconds, threads (it ran on; 0 before the first "
    "step), parked_waits (waits that parked a thread), thread_decision (why that many, when "
    "the executor adapts at run time).";

Config to_config(const py::dict& values) {
  py::module_ np = py::module_::import("numpy");
  const py::object np_integer = np.attr("integer"), np_floating = np.attr("floating");
  Config config;
  for (auto item : values) {
    const std::string key = py::str(item.first);
    py::handle v = item.second;
    // Only scalars that are numbers: bools, strings, arrays (even of size 1)
    // and objects with __float__ would be coerced silently.
    const bool integer = PyLong_Check(v.ptr()) || py::isinstance(v, np_integer);
    const bool real = PyFloat_Check(v.ptr()) || py::isinstance(v, np_floating);
    if (is_bool(v) || !(integer || real)) {
      throw std::invalid_argument(key + " must be a number, got " + text_of(v));
    }
    double d = 0.0;
    if (integer) {
      const py::int_ as_int = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
      d = PyLong_AsDouble(as_int.ptr());
      if (d == -1.0 && PyErr_Occurred()) {  // OverflowError: beyond a double's range
        PyErr_Clear();
        throw std::invalid_argument(key + " must be a number a float64 can hold, got " +
                                    text_of(v));
      }
    } else {
      d = py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>();
    }
    config.set(key, d);
  }
  return config;
}

std::uint64_t to_count(const py::object& value, const char* name, std::uint64_t lo,
                       std::uint64_t hi) {
  const py::int_ v = integer_of(value, std::string(name) + " must be an integer");
  if (v < py::int_(lo) || v > py::int_(hi)) {
    throw std::invalid_argument(std::string(name) + " must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + std::string(py::str(v)));
  }
  return v.cast<std::uint64_t>();
}

unsigned to_num_threads(const py::object& value) {
  // The range is the runtime's (check_num_threads); checked here on the Python
  // int, so that -2 or 10**30 is reported as written rather than wrapped.
  const py::int_ v = integer_of(value, "num_threads must be an integer");
  if (v < py::int_(1) || v > py::int_(max_num_threads())) {
    throw num_threads_error(py::str(v));
  }
  return v.cast<unsigned>();
}

SimulationOptions to_options(const std::string& executor, const py::object& num_threads,
                             bool check, const py::object& event_budget) {
  SimulationOptions options;
  options.executor = executor;
  options.num_threads = to_num_threads(num_threads);
  options.check = check;
  options.event_budget = to_count(event_budget, "event_budget", 0, ~std::uint64_t{0});
  return options;
}

std::uint64_t to_seed(const py::object& seed) {
  const std::string must = "seed must be an integer in [0, 2**64)";
  const py::int_ value = integer_of(seed, must);
  const py::int_ limit = py::int_(1).attr("__lshift__")(64);
  if (value < py::int_(0) || value >= limit) {
    throw std::invalid_argument(must + ", got " + std::string(py::str(value)));
  }
  return value.cast<std::uint64_t>();
}

py::dict spec_dict(const ModelSpec& s) {
  py::dict d;
  d["name"] = s.name;
  d["num_entities"] = s.num_entities;
  d["num_agents"] = s.num_agents;
  d["agent_prefix"] = s.agent_prefix;
  d["lookahead"] = s.lookahead;
  d["dt"] = s.dt;
  py::dict derived;
  for (const auto& [name, value] : s.derived_params) derived[py::str(name)] = value;
  d["derived_params"] = derived;
  d["obs_dim"] = s.obs_dim;
  d["obs_low"] = s.obs_low;
  d["obs_high"] = s.obs_high;
  py::dict action;
  action["discrete"] = s.action.discrete;
  action["n"] = s.action.n;
  action["dim"] = s.action.dim;
  action["low"] = s.action.low;
  action["high"] = s.action.high;
  d["action"] = action;
  d["state_dim"] = s.state_dim;
  d["state_low"] = s.state_low;
  d["state_high"] = s.state_high;
  d["info_keys"] = s.info_keys;
  d["total_keys"] = s.total_keys;
  d["event_kinds"] = s.event_kinds;
  d["decisions"] = s.decisions;
  d["action_mask"] = s.action_mask;
  return d;
}


py::array action_array(const ModelSpec& s, const py::object& actions, std::size_t rows) {
  const py::array given = py::module_::import("numpy").attr("asarray")(actions);
  const char kind = kind_of(given);
  // Discrete: integers only (a real would be truncated); Box: integers or
  // reals. Strings, bools, complex and objects would be coerced silently.
  const bool ok = s.action.discrete ? (kind == 'i' || kind == 'u')
                                    : (kind == 'i' || kind == 'u' || kind == 'f');
  if (!ok) {
    throw std::invalid_argument(
        std::string("actions must be an ") + (s.action.discrete ? "integer" : "integer or real") +
        " array, got dtype " + std::string(py::str(given.dtype())));
  }
  py::array arr;
  if (s.action.discrete) {
    arr = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(given);
  } else {
    arr = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(given);
  }
  if (!arr) throw std::invalid_argument("actions must be a numeric array");
  const std::size_t per_agent = s.action.discrete ? 1 : s.action.dim;
  if (static_cast<std::size_t>(arr.size()) != rows * per_agent) {
    throw std::invalid_argument("actions must have " + std::to_string(rows * per_agent) +
                                " values (agents x action size), got " +
                                std::to_string(arr.size()));
  }
  return arr;
}

void check_action_values(const ModelSpec& s, const py::array& actions, std::size_t rows,
                         const std::uint8_t* alive) {
  if (s.action.discrete) {
    const auto* v = static_cast<const std::int64_t*>(actions.data());
    for (std::size_t i = 0; i < rows; ++i) {
      if ((alive == nullptr || alive[i]) && (v[i] < 0 || v[i] >= s.action.n)) {
        throw std::invalid_argument("actions[" + std::to_string(i) + "] must be in [0, " +
                                    std::to_string(s.action.n) + "), got " + std::to_string(v[i]));
      }
    }
    return;
  }
  const auto* v = static_cast<const float*>(actions.data());
  const std::size_t dim = s.action.dim;
  for (std::size_t i = 0; i < rows; ++i) {
    if (alive != nullptr && !alive[i]) continue;
    for (std::size_t k = 0; k < dim; ++k) {
      const float x = v[i * dim + k];
      // Written so that NaN fails; infinite bounds still refuse inf.
      if (!(x >= s.action.low && x <= s.action.high) || !std::isfinite(x)) {
        std::ostringstream out;
        out << "actions[" << i << "][" << k << "] must be finite and within [" << s.action.low
            << ", " << s.action.high << "], got " << x;
        throw std::invalid_argument(out.str());
      }
    }
  }
}

py::array_t<std::uint8_t> mask_array(const py::object& mask, std::size_t rows, const char* name) {
  if (mask.is_none()) return py::array_t<std::uint8_t>(0);
  const std::string what = std::string(name) + " must be a bool or 0/1 integer array of length " +
                           std::to_string(rows);
  const py::array given = array_of(mask, rows, what, "biu");
  if (kind_of(given) == 'b') {
    return py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(given);
  }
  const auto wide = as_int64(given);
  py::array_t<std::uint8_t> out(static_cast<py::ssize_t>(rows));
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t v = wide.data()[i];
    if (v != 0 && v != 1) {
      throw std::invalid_argument(what + ", got " + std::to_string(v) + " at index " +
                                  std::to_string(i));
    }
    out.mutable_data()[i] = static_cast<std::uint8_t>(v);
  }
  return out;
}

py::array_t<std::uint8_t> small_uint_array(const py::object& values, std::size_t m,
                                           std::uint64_t hi, const char* name) {
  const std::string what = std::string(name) + " must be an integer array of " +
                           std::to_string(m) + " values in [0, " + std::to_string(hi) + "]";
  const auto wide = as_int64(array_of(values, m, what, "iu"));
  py::array_t<std::uint8_t> out(static_cast<py::ssize_t>(m));
  for (std::size_t i = 0; i < m; ++i) {
    const std::int64_t v = wide.data()[i];
    if (v < 0 || static_cast<std::uint64_t>(v) > hi) {
      throw std::invalid_argument(what + ", got " + std::to_string(v) + " at index " +
                                  std::to_string(i));
    }
    out.mutable_data()[i] = static_cast<std::uint8_t>(v);
  }
  return out;
}

py::array_t<std::uint64_t> seed_array(const py::object& values, std::size_t m) {
  const std::string what =
      "seeds must be an integer array of " + std::to_string(m) + " values in [0, 2**64)";
  const py::array given = array_of(values, m, what, "iu");
  if (kind_of(given) == 'i') {  // -1 would wrap to 2**64 - 1
    const auto signed_values = as_int64(given);
    for (std::size_t i = 0; i < m; ++i) {
      if (signed_values.data()[i] < 0) {
        throw std::invalid_argument(what + ", got " + std::to_string(signed_values.data()[i]) +
                                    " at index " + std::to_string(i));
      }
    }
  }
  return py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(given);
}

}  // namespace seer::bindings
