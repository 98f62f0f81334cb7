// Conversions and guards shared by the binding files.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "seer/config.hpp"
#include "seer/errors.hpp"
#include "seer/model.hpp"
#include "seer/simulation.hpp"

namespace seer::bindings {

// Refuses concurrent calls on one Simulation (the GIL is released inside).
class BusyGuard {
 public:
  explicit BusyGuard(std::atomic<bool>& busy) : busy_(busy) {
    if (busy_.exchange(true, std::memory_order_acquire)) {
      throw CallOrderError("this env is already running a call in another thread");
    }
  }
  ~BusyGuard() { busy_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool>& busy_;
};

// For hints that run with the GIL held and are skipped while a call is in
// flight: every call sets `busy` before it releases the GIL, so while we hold
// the GIL and see it clear, no call is running and none can start. (Taking
// the flag instead would make a concurrent step() fail with CallOrderError.)
inline bool idle_under_gil(const std::atomic<bool>& busy) {
  return !busy.load(std::memory_order_acquire);
}

// A Python dict of numbers -> Config (ValueError naming a non-numeric key).
Config to_config(const pybind11::dict& values);
// A Python integer in [lo, hi] -> value; ValueError naming `name` otherwise
// (negative numbers included, which an unsigned pybind11 argument would turn
// into a TypeError).
std::uint64_t to_count(const pybind11::object& value, const char* name, std::uint64_t lo,
                       std::uint64_t hi);
unsigned to_num_threads(const pybind11::object& value);
// The keyword arguments shared by Simulation and VectorSimulation.
SimulationOptions to_options(const std::string& executor, const pybind11::object& num_threads,
                             bool check, const pybind11::object& event_budget);
// A Python integer in [0, 2**64) -> seed (ValueError otherwise).
std::uint64_t to_seed(const pybind11::object& seed);
// Actions for `rows` agents as a C-contiguous int64 (Discrete) or float32
// (Box) array; ValueError naming `actions` for a wrong size.
pybind11::array action_array(const ModelSpec& spec, const pybind11::object& actions,
                             std::size_t rows);
// A uint8 array of `rows` values (empty if `mask` is None); ValueError naming `name`.
pybind11::array_t<std::uint8_t> mask_array(const pybind11::object& mask, std::size_t rows,
                                           const char* name);
// The model spec as a dict (spaces, sizes, names).
pybind11::dict spec_dict(const ModelSpec& s);

// A fresh numpy array of `shape` filled from `data`.
template <class T>
pybind11::array_t<T> copy_array(const T* data, std::vector<pybind11::ssize_t> shape) {
  pybind11::array_t<T> out(shape);
  std::copy_n(data, out.size(), out.mutable_data());
  return out;
}

}  // namespace seer::bindings
