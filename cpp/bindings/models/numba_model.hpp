// The bindings side of seer_env.NumbaModel: a CompiledModel from a Python
// model instance whose handlers numba compiled to cfuncs.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "seer/model.hpp"

namespace seer::bindings {

// The CompiledModel of `impl` if it is a seer_env.NumbaModel in compiled mode,
// else nullptr (GIL held).
std::unique_ptr<Model> make_compiled_model(const pybind11::object& impl);

}  // namespace seer::bindings
