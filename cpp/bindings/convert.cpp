#include "convert.hpp"

#include <pybind11/stl.h>

#include <stdexcept>

#include "seer/executor.hpp"
#include <string>

namespace py = pybind11;

namespace seer::bindings {

Config to_config(const py::dict& values) {
  Config config;
  for (auto item : values) {
    const std::string key = py::str(item.first);
    py::handle v = item.second;
    if (!(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v) ||
          py::hasattr(v, "__index__") || py::hasattr(v, "__float__")) ||
        py::isinstance<py::str>(v)) {
      throw std::invalid_argument(key + " must be a number, got " +
                                  std::string(py::str(py::repr(v))));
    }
    const double d = v.cast<double>();
    config.set(key, d);
  }
  return config;
}

std::uint64_t to_count(const py::object& value, const char* name, std::uint64_t lo,
                       std::uint64_t hi) {
  if (!py::hasattr(value, "__index__") || py::isinstance<py::bool_>(value)) {
    throw std::invalid_argument(std::string(name) + " must be an integer, got " +
                                std::string(py::str(py::repr(value))));
  }
  const py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
  if (v < py::int_(lo) || v > py::int_(hi)) {
    throw std::invalid_argument(std::string(name) + " must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + std::string(py::str(v)));
  }
  return v.cast<std::uint64_t>();
}

unsigned to_num_threads(const py::object& value) {
  const unsigned most = max_num_threads();
  if (py::hasattr(value, "__index__") && !py::isinstance<py::bool_>(value)) {
    const py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
    if (v < py::int_(1) || v > py::int_(most)) {
      throw std::invalid_argument("num_threads must be in [1, " + std::to_string(most) +
                                  "] (8 per usable CPU, at least 64), got " +
                                  std::string(py::str(v)));
    }
  }
  return static_cast<unsigned>(to_count(value, "num_threads", 1, most));
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
  if (!py::hasattr(seed, "__index__") || py::isinstance<py::bool_>(seed)) {
    throw std::invalid_argument("seed must be an integer in [0, 2**64), got " +
                                std::string(py::str(py::repr(seed))));
  }
  py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(seed.ptr()));
  const py::int_ limit = py::int_(1).attr("__lshift__")(64);
  if (value < py::int_(0) || value >= limit) {
    throw std::invalid_argument("seed must be an integer in [0, 2**64), got " +
                                std::string(py::str(value)));
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
  return d;
}


py::array action_array(const ModelSpec& s, const py::object& actions, std::size_t rows) {
  py::array arr;
  if (s.action.discrete) {
    arr = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(actions);
  } else {
    arr = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(actions);
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

py::array_t<std::uint8_t> mask_array(const py::object& mask, std::size_t rows, const char* name) {
  if (mask.is_none()) return py::array_t<std::uint8_t>(0);
  auto arr = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(mask);
  if (!arr || static_cast<std::size_t>(arr.size()) != rows) {
    throw std::invalid_argument(std::string(name) + " must be a uint8/bool array of length " +
                                std::to_string(rows));
  }
  return arr;
}

}  // namespace seer::bindings
