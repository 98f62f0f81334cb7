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

// A Python dict of numbers -> Config (ValueError naming a non-numeric key).
Config to_config(const pybind11::dict& values);
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
