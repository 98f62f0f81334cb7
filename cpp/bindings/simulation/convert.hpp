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
#include "simulation.hpp"

namespace seer::bindings {

// The error for a call made while another call on the same env runs: from
// another thread, or re-entrant from one of the env's own (Python) handlers.
CallOrderError call_in_progress(const char* what);

// Refuses concurrent and re-entrant calls on one Simulation (the GIL is
// released inside, and Python handlers retake it in the middle of a step).
class BusyGuard {
 public:
  BusyGuard(std::atomic<bool>& busy, const char* what) : busy_(busy) {
    if (busy_.exchange(true, std::memory_order_acquire)) throw call_in_progress(what);
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

// For reads made with the GIL held (outputs, digest, save): CallOrderError
// while a call is in flight, whose threads may be writing what we would read.
inline void require_idle(const std::atomic<bool>& busy, const char* what) {
  if (!idle_under_gil(busy)) throw call_in_progress(what);
}

// sim.save() as a Python bytes written in place (no copy beyond the
// snapshot), the GIL released while it is filled.
pybind11::bytes save_to_bytes(const Simulation& sim);
// sim.load() from a bytes-like object (bytes, bytearray, memoryview, a
// contiguous uint8 array), read in place with the GIL released; ValueError
// for anything else.
void load_from_buffer(Simulation& sim, const pybind11::object& blob);

// What `sim`'s last step did, as Simulation.last_step returns it.
pybind11::dict last_step_dict(const Simulation& sim);
// Its docstring.
extern const char* const kLastStepDoc;

// A Python dict of numbers -> Config: ValueError naming the key and value of
// anything but an int or float (Python or NumPy scalar; not bool) that a
// double holds (10**400 does not).
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
// Actions for `rows` agents as a C-contiguous int64 (Discrete: integer dtype,
// values in [0, n)) or float32 (Box: integer or real dtype) array; ValueError
// naming `actions` for a wrong dtype, size or value (nothing is truncated).
pybind11::array action_array(const ModelSpec& spec, const pybind11::object& actions,
                             std::size_t rows);
// ValueError naming the first live row (alive: nullptr = all live) of an
// action_array() result outside the action space: a model may index with it.
void check_action_values(const ModelSpec& spec, const pybind11::array& actions, std::size_t rows,
                         const std::uint8_t* alive);
// A uint8 array of `rows` 0/1 values from a bool or integer array (empty if
// `mask` is None); ValueError naming `name` for any other dtype or value.
pybind11::array_t<std::uint8_t> mask_array(const pybind11::object& mask, std::size_t rows,
                                           const char* name);
// `m` values of an integer dtype in [0, hi] as uint8/uint64 (modes, seeds of
// VectorSimulation.step); ValueError naming `name` for anything else.
pybind11::array_t<std::uint8_t> small_uint_array(const pybind11::object& values, std::size_t m,
                                                 std::uint64_t hi, const char* name);
pybind11::array_t<std::uint64_t> seed_array(const pybind11::object& values, std::size_t m);
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
