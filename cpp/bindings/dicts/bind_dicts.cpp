// seer_env._core.DictBridge: the PettingZoo dict API's per-agent work in C++.
//
// A dict step of a 4096-agent env built ~4096 x 7 Python objects through the
// interpreter (~3 ms, more than the parallel step itself). Here the same
// objects are built with the CPython API in one call: keys are the env's own
// agent-name and info-key strings (interned once), values are today's types
// (float32 row views of an observation array of the bridge's own, float, bool,
// int). Objects the caller has let go of are refilled rather than rebuilt
// (output_recycling.hpp: ~4x less per agent); nothing the caller holds is
// written again.
//
// Rows are found by name: `live` (the user's `env.agents`) may be in any
// order; while it keeps possible_agents' order no name is hashed
// (dicts/agent_rows.hpp). Actions take a fast path only, and None sends the
// rest to the env's Python checker (dicts/action_reader.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "compiler.hpp"
#include "dicts/action_reader.hpp"
#include "dicts/agent_rows.hpp"
#include "dicts/dict_building.hpp"
#include "dicts/dict_entries.hpp"
#include "dicts/output_recycling.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

// A dict of floats or bools (numbers: double, 0/1) as the bridge last left
// it. While its version tag is the same, nobody has changed it: it still
// holds {keys[j]: the object made from numbers[j]} (the dict keeps those
// objects alive).
template <class Number>
struct ScalarDict {
  py::object dict;
  std::uint64_t tag = 0;        // dict_version() when we left it; 0: unknown
  std::vector<PyObject*> keys;  // its keys then, in order (borrowed)
  std::vector<Number> numbers;  // what its values stand for
};

class DictBridge {
 public:
  DictBridge(const py::list& names, const py::list& info_keys, bool discrete,
             std::size_t act_dim, std::int64_t act_n, double low, double high)
      : reader_(discrete, act_dim, act_n, low, high), agents_(names) {
    for (auto key : info_keys) {
      py::object k = AgentRows::intern(py::reinterpret_borrow<py::object>(key));
      info_keys_.push_back(k);
      set_item(info_template_.ptr(), k.ptr(), py::int_(0));
    }
    for (std::int64_t x = 0; x < kSmallInts; ++x) small_ints_.push_back(py::int_(x));
  }

  // (actions, alive or None) for Simulation.step, or None: not the fast case.
  py::object actions(const py::dict& given, const py::list& live) const {
    return reader_.actions(given, live, agents_);
  }

  // None when `live` is possible_agents in order, else each live agent's row.
  py::object live_rows(const py::list& live) const { return agents_.live_rows(live); }

  // agent name -> row (shared, not a copy: the caller must not change it).
  py::dict index() const { return agents_.index(); }

  // The five step dicts keyed by `live` (in its order) and the agents left.
  // Objects the caller let go of are refilled (output_recycling.hpp).
  py::tuple step_outputs(const py::list& live, const py::array& obs, const py::array& rewards,
                         const py::array& terms, const py::array& truncs, const py::array& infos,
                         bool truncate_all) {
    const auto rew = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(rewards);
    const auto te = flags(terms, "terminations");
    const auto tr = flags(truncs, "truncations");
    require_rows(rew, "rewards");
    const auto table = info_table(infos);
    const auto observations = observation_array(obs);
    const InUse in_use(in_use_);
    agents_.locate(live, rows_);
    const std::size_t count = rows_.size();
    const double* rew_ptr = rew.data();
    const std::uint8_t* te_ptr = te.data();
    const std::uint8_t* tr_ptr = tr.data();
    const std::int64_t* info_ptr = table.data();
    const std::size_t k = info_keys_.size();
    GcPause pause;
    py::object obs_d = observation_dict(live, observations);
    auto reward = [&](std::size_t j) { return rew_ptr[rows_[j]]; };
    // Flags as 0/1 bytes (a std::vector<bool> would not hold them as numbers).
    auto term = [&](std::size_t j) -> std::uint8_t { return te_ptr[rows_[j]] != 0; };
    auto trunc = [&](std::size_t j) -> std::uint8_t {
      return truncate_all || tr_ptr[rows_[j]] != 0;
    };
    py::object rew_d = scalar_dict(rewards_, live, reward);
    py::object term_d = scalar_dict(terminations_, live, term);
    py::object trunc_d = scalar_dict(truncations_, live, trunc);
    py::object info_d = refill_or_build(
        infos_, live,
        [&](PyObject* v, std::size_t j) { return refill_info(v, info_ptr + rows_[j] * k); },
        [&](std::size_t j) { return info_dict(info_ptr + rows_[j] * k); });
    bool any_done = false;
    for (std::size_t j = 0; j < count && !any_done; ++j) any_done = term(j) || trunc(j);
    // The agents left, a new list every step (a caller may keep or change the
    // one it had): a copy of `live` in the common case (nobody is done).
    auto next = py::reinterpret_steal<py::list>(
        PyList_GetSlice(live.ptr(), 0, static_cast<Py_ssize_t>(any_done ? 0 : count)));
    if (!next) throw py::error_already_set();
    for (std::size_t j = 0; any_done && j < count; ++j) {
      if (term(j) || trunc(j)) continue;
      if (PyList_Append(next.ptr(), PyList_GET_ITEM(live.ptr(), j)) != 0) {
        throw py::error_already_set();
      }
    }
    return py::make_tuple(obs_d, rew_d, term_d, trunc_d, info_d, next);
  }

  // reset(): (observations, infos) keyed by `live`.
  py::tuple reset_outputs(const py::list& live, const py::array& obs, const py::array& infos) {
    const auto table = info_table(infos);
    const auto observations = observation_array(obs);
    const InUse in_use(in_use_);
    agents_.locate(live, rows_);
    const std::int64_t* info_ptr = table.data();
    const std::size_t k = info_keys_.size();
    GcPause pause;
    py::object obs_d = observation_dict(live, observations);
    py::object info_d = refill_or_build(
        infos_, live,
        [&](PyObject* v, std::size_t j) { return refill_info(v, info_ptr + rows_[j] * k); },
        [&](std::size_t j) { return info_dict(info_ptr + rows_[j] * k); });
    return py::make_tuple(obs_d, info_d);
  }

 private:
  // Marks a call that refills: releasing an old value may run Python code
  // (a __del__ of an object the caller put in a dict), which must not
  // re-enter the bridge while it holds positions in its dicts and scratch.
  class InUse {
   public:
    explicit InUse(bool& flag) : flag_(flag) {
      if (flag_) throw std::runtime_error("the dict API was re-entered while it built outputs");
      flag_ = true;
    }
    ~InUse() { flag_ = false; }
    InUse(const InUse&) = delete;
    InUse& operator=(const InUse&) = delete;

   private:
    bool& flag_;
  };

  template <class A>
  void require_rows(const A& a, const char* what) const {
    if (!a || static_cast<std::size_t>(a.size()) != agents_.size()) {
      throw std::invalid_argument(std::string(what) + " must have one value per agent");
    }
  }

  // Terminations/truncations: uint8 (the runtime's buffers) or bool, one per agent.
  py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast> flags(
      const py::array& a, const char* what) const {
    using Bytes = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>;
    // A bool array is read as its bytes (no copy); anything else is cast.
    const Bytes out =
        Bytes::ensure(a.dtype().is(py::dtype::of<bool>()) ? py::object(a.attr("view")("uint8"))
                                                       : py::object(a));
    require_rows(out, what);
    if (out.ndim() != 1 || out.strides(0) != 1) {
      throw std::invalid_argument(std::string(what) + " must be a contiguous bool/uint8 array");
    }
    return out;
  }

  // The observations: float32 [num_agents, obs_dim], C-contiguous. They are
  // copied into a buffer of ours whose rows are the returned values: no row
  // aliases what the next step writes.
  py::array_t<float> observation_array(const py::array& obs) const {
    auto arr = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(obs);
    if (!arr || arr.ndim() != 2 || static_cast<std::size_t>(arr.shape(0)) != agents_.size()) {
      throw std::invalid_argument("observations must have one row per agent");
    }
    return arr;
  }

  // {live[j]: row rows_[j]} of a buffer nobody else holds (refilled from
  // `obs`); the buffer's last dict is reused when only we hold it and the
  // caller left it as it was.
  py::object observation_dict(const py::list& live, const py::array_t<float>& obs) {
    const std::size_t count = rows_.size();
    const auto bytes = static_cast<std::size_t>(obs.nbytes());
    for (std::size_t s = 0; s < observations_.size(); ++s) {
      auto& buffer = observations_[s];
      if (!buffer) continue;
      in_dict_.assign(agents_.size(), 0);
      if (buffer->dict) {
        if (!only_owned_by(buffer->dict.ptr(), 1)) continue;  // the caller holds it
        if (same_rows(buffer->dict.ptr(), live, *buffer)) {
          for (std::size_t j = 0; j < count; ++j) in_dict_[rows_[j]] = 1;
        } else {
          buffer->dict = py::object();  // ours alone: drop it (and its row references)
        }
      }
      if (!buffer->free(in_dict_)) continue;
      std::memcpy(buffer->data(), obs.data(), bytes);
      if (!buffer->dict) buffer->dict = row_dict(live, *buffer);
      return buffer->dict;
    }
    auto& buffer = observations_[observations_.victim()];
    buffer = std::make_unique<ObservationBuffer>(agents_.size(),
                                                 static_cast<std::size_t>(obs.shape(1)));
    std::memcpy(buffer->data(), obs.data(), bytes);
    buffer->dict = row_dict(live, *buffer);
    return buffer->dict;
  }

  // True when `d` is exactly {live[j]: row rows_[j] of `buffer`}, in that order.
  bool same_rows(PyObject* d, const py::list& live, const ObservationBuffer& buffer) {
    if (!items_in_order(d, live, dict_entries(d))) return false;
    for (std::size_t j = 0; j < rows_.size(); ++j) {
      if (values_[j] != buffer.row(rows_[j])) return false;
    }
    return true;
  }

  // When `d`'s keys are exactly live's, in that order: true, with its values
  // in values_ (borrowed). `entries`: d's items read in place, or nullptr.
  bool items_in_order(PyObject* d, const py::list& live, const DictEntry* entries) {
    const std::size_t count = rows_.size();
    if (static_cast<std::size_t>(PyDict_GET_SIZE(d)) != count) return false;
    values_.resize(count);
    if (entries != nullptr) {
      for (std::size_t j = 0; j < count; ++j) {
        if (entries[j].key != PyList_GET_ITEM(live.ptr(), j)) return false;
        values_[j] = entries[j].value;
      }
      return true;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    for (std::size_t j = 0; PyDict_Next(d, &pos, &key, &value); ++j) {
      if (key != PyList_GET_ITEM(live.ptr(), j)) return false;
      values_[j] = value;
    }
    return true;
  }

  py::object row_dict(const py::list& live, const ObservationBuffer& buffer) const {
    py::dict d = presized_dict(rows_.size());
    for (std::size_t j = 0; j < rows_.size(); ++j) {
      set_borrowed(d.ptr(), PyList_GET_ITEM(live.ptr(), j), buffer.row(rows_[j]));
    }
    return std::move(d);
  }

  // The dict {live[j]: float(number_of(j)) or bool(number_of(j))} from `pool`: one only we
  // hold, refilled, or a new one. One we left untouched (same version tag)
  // is brought up to date by comparing numbers, without reading its items.
  template <class Number, class NumberOf>
  py::object scalar_dict(Pool<ScalarDict<Number>>& pool, const py::list& live,
                         NumberOf number_of) {
    auto make = [&](std::size_t j) { return new_scalar(number_of(j)); };
    for (std::size_t s = 0; s < pool.size(); ++s) {
      ScalarDict<Number>& slot = pool[s];
      if (!slot.dict || !only_owned_by(slot.dict.ptr(), 1)) continue;
      if (!update_untouched(slot, live, number_of)) {
        auto keep = [&](PyObject* v, std::size_t j) { return holds(v, number_of(j)); };
        if (!refill(slot.dict.ptr(), live, keep, make)) slot.dict = build(live, make);
        remember(slot, live, number_of);
      }
      return slot.dict;
    }
    ScalarDict<Number>& slot = pool[pool.victim()];
    slot.dict = build(live, make);
    remember(slot, live, number_of);
    return slot.dict;
  }

  // When `slot`'s dict is as we left it with live's keys: replaces the values
  // whose number changed (true); else false (nothing written).
  template <class Number, class NumberOf>
  bool update_untouched(ScalarDict<Number>& slot, const py::list& live, NumberOf number_of) {
    PyObject* d = slot.dict.ptr();
    const std::size_t count = rows_.size();
    if (slot.tag == 0 || dict_version(d) != slot.tag || slot.keys.size() != count) return false;
    DictEntry* entries = dict_entries(d);
    if (entries == nullptr) return false;
    for (std::size_t j = 0; j < count; ++j) {
      if (slot.keys[j] != PyList_GET_ITEM(live.ptr(), j)) return false;
    }
    for (std::size_t j = 0; j < count; ++j) {
      const Number x = number_of(j);
      if (same_bits(x, slot.numbers[j])) continue;
      replace_value(entries[j], new_scalar(x));
      slot.numbers[j] = x;
    }
    return true;
  }

  // Records what `slot`'s dict holds now: {live[j]: number_of(j)}.
  template <class Number, class NumberOf>
  void remember(ScalarDict<Number>& slot, const py::list& live, NumberOf number_of) const {
    const std::size_t count = rows_.size();
    slot.keys.resize(count);
    slot.numbers.resize(count);
    for (std::size_t j = 0; j < count; ++j) {
      slot.keys[j] = PyList_GET_ITEM(live.ptr(), j);
      slot.numbers[j] = number_of(j);
    }
    slot.tag = dict_version(slot.dict.ptr());
  }

  static PyObject* new_scalar(double x) {
    PyObject* v = PyFloat_FromDouble(x);
    if (v == nullptr) throw py::error_already_set();
    return v;
  }
  static PyObject* new_scalar(std::uint8_t flag) { return new_ref(as_bool(flag != 0)); }
  static bool holds(PyObject* v, double x) { return same_float(v, x); }
  static bool holds(PyObject* v, std::uint8_t flag) { return v == as_bool(flag != 0); }
  // Same bits: -0.0 and NaNs are told apart as the float objects would be.
  template <class Number>
  static bool same_bits(Number a, Number b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
  }

  // A dict {live[j]: value j} from `pool`: one only we hold, refilled in
  // place (`keep(v, j)`: v, the value there, is right or was brought up to
  // date; else `make(j)`, a new reference, replaces it), or a new one.
  template <class Keep, class Make>
  py::object refill_or_build(Pool<py::object>& pool, const py::list& live, Keep keep,
                             Make make) {
    for (std::size_t s = 0; s < pool.size(); ++s) {
      py::object& d = pool[s];
      if (!d || !only_owned_by(d.ptr(), 1)) continue;
      if (!refill(d.ptr(), live, keep, make)) d = build(live, make);  // the caller changed it
      return d;
    }
    py::object& d = pool[pool.victim()];
    d = build(live, make);
    return d;
  }

  // Refills `d` in place; false when it is not {live[j]: ...} in that order
  // (the caller changed it). Two passes: the values are read out first, so
  // the objects behind them can be fetched ahead of `keep` (the step just
  // evicted them from the cache).
  template <class Keep, class Make>
  bool refill(PyObject* d, const py::list& live, Keep keep, Make make) {
    DictEntry* entries = dict_entries(d);
    if (!items_in_order(d, live, entries)) return false;
    const std::size_t count = rows_.size();
    for (std::size_t j = 0; j < count; ++j) {
      if (j + kAhead < count) prefetch_object(values_[j + kAhead]);
      if (j + kAhead / 2 < count) prefetch_dict_table(values_[j + kAhead / 2]);
      // `keep` runs no Python code: values_[j] is still the dict's value,
      // and nobody else can reach `d` to change its layout.
      if (keep(values_[j], j)) continue;
      if (entries != nullptr) {
        PyObject* value = make(j);
        if (value == nullptr) throw py::error_already_set();
        replace_value(entries[j], value);
      } else {
        set_new(d, PyList_GET_ITEM(live.ptr(), j), make(j));
      }
    }
    return true;
  }

  SEER_PREFETCH_HELPER static void prefetch_object(PyObject* o) { SEER_PREFETCH(o); }

  // An info dict's key table (three cache lines for six keys). Reads the
  // dict's header, fetched kAhead / 2 values ago.
  SEER_PREFETCH_HELPER static void prefetch_dict_table(PyObject* o) {
    if (!PyDict_CheckExact(o)) return;
    const char* table = reinterpret_cast<const char*>(reinterpret_cast<PyDictObject*>(o)->ma_keys);
    for (int line = 0; line < 3; ++line) SEER_PREFETCH(table + 64 * line);
  }

  template <class Make>
  py::object build(const py::list& live, Make make) const {
    py::dict d = presized_dict(rows_.size());
    for (std::size_t j = 0; j < rows_.size(); ++j) {
      set_new(d.ptr(), PyList_GET_ITEM(live.ptr(), j), make(j));
    }
    return std::move(d);
  }

  static PyObject* as_bool(bool b) { return b ? Py_True : Py_False; }
  static PyObject* new_ref(PyObject* o) {
    Py_INCREF(o);
    return o;
  }

  // The float `v` holds exactly `x` (same bits: -0.0 and NaNs stay what they are).
  static bool same_float(PyObject* v, double x) {
    return PyFloat_CheckExact(v) && same_bits(PyFloat_AS_DOUBLE(v), x);
  }

  // Brings `v`, an info dict of ours that nobody else holds, to `row`; false
  // when it is not that (the caller holds it, or changed its keys).
  bool refill_info(PyObject* v, const std::int64_t* row) const {
    if (!PyDict_CheckExact(v) || !only_owned_by(v, 1)) return false;
    if (static_cast<std::size_t>(PyDict_GET_SIZE(v)) != info_keys_.size()) return false;
    if (DictEntry* e = dict_entries(v)) {
      for (std::size_t c = 0; c < info_keys_.size(); ++c) {
        if (e[c].key != info_keys_[c].ptr()) return false;
        if (!same_int(e[c].value, row[c])) replace_value(e[c], new_int(row[c]));
      }
      return true;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    for (std::size_t c = 0; PyDict_Next(v, &pos, &key, &value); ++c) {
      if (key != info_keys_[c].ptr()) return false;
      if (!same_int(value, row[c])) set_new(v, key, new_int(row[c]));
    }
    return true;
  }

  // `value` is int(x).
  bool same_int(PyObject* value, std::int64_t x) const {
    // Small ints are shared singletons: an identity test, no read of `value`.
    if (x >= 0 && x < kSmallInts && value == small_ints_[static_cast<std::size_t>(x)].ptr()) {
      return true;
    }
    if (!PyLong_CheckExact(value)) return false;
    int overflow = 0;
    const long long have = PyLong_AsLongLongAndOverflow(value, &overflow);
    return overflow == 0 && have == x;
  }

  // int(x), a new reference: the shared small int when there is one (no call into CPython).
  PyObject* new_int(std::int64_t x) const {
    if (x >= 0 && x < kSmallInts) return new_ref(small_ints_[static_cast<std::size_t>(x)].ptr());
    PyObject* v = PyLong_FromLongLong(x);
    if (v == nullptr) throw py::error_already_set();
    return v;
  }

  py::array_t<std::int64_t> info_table(const py::array& infos) const {
    auto table = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(infos);
    if (!table || static_cast<std::size_t>(table.size()) != agents_.size() * info_keys_.size()) {
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

  ActionReader reader_;
  AgentRows agents_;  // possible_agents: each name's row
  py::dict info_template_;  // {info_key: 0}
  std::vector<py::object> info_keys_;
  static constexpr std::int64_t kSmallInts = 257;  // CPython caches ints -5..256
  std::vector<py::object> small_ints_;              // int(0) .. int(256)
  // Outputs kept for reuse: two of each covers a caller that holds one
  // step's dicts while it calls the next step.
  Pool<std::unique_ptr<ObservationBuffer>> observations_{2};
  Pool<ScalarDict<double>> rewards_{2};
  Pool<ScalarDict<std::uint8_t>> terminations_{2}, truncations_{2};
  Pool<py::object> infos_{2};
  std::vector<std::ptrdiff_t> rows_;   // rows_[j]: the row of live[j] (this call)
  std::vector<std::uint8_t> in_dict_;  // rows referenced by a reused observation dict
  std::vector<PyObject*> values_;      // a refilled dict's values in order (borrowed)
  bool in_use_ = false;                // step_outputs/reset_outputs running (InUse)
  static constexpr std::size_t kAhead = 32;  // values whose objects are fetched ahead
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
      .def_property_readonly("index", &DictBridge::index,
                             "agent name -> row: the bridge's own dict, shared (do not change it).")
      .def("live_rows", &DictBridge::live_rows, py::arg("live"),
           "None when live is possible_agents in order, else each live agent's row (int64); "
           "ValueError for a name twice or one that is no agent's.")
      .def("step_outputs", &DictBridge::step_outputs, py::arg("live"), py::arg("obs"),
           py::arg("rewards"), py::arg("terminations"), py::arg("truncations"), py::arg("infos"),
           py::arg("truncate_all"),
           "(obs, rewards, terminations, truncations, infos) dicts keyed by live, and the "
           "agents left.")
      .def("reset_outputs", &DictBridge::reset_outputs, py::arg("live"), py::arg("obs"),
           py::arg("infos"), "(observations, infos) dicts keyed by live.");
  m.def(
      "_dict_entries",
      [](std::optional<bool> use) {
        if (use) enable_dict_entries(*use);
        return dict_entries_enabled();
      },
      py::arg("use") = py::none(),
      "Whether DictBridge reads its own dicts' items in place (tests switch it off and on).");
}

}  // namespace seer::bindings
