// One binding function per area, all registered by module.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace seer::bindings {

void bind_errors(pybind11::module_& m);
void bind_plugins(pybind11::module_& m);
void bind_python_model(pybind11::module_& m);
void bind_rng(pybind11::module_& m);
void bind_simulation(pybind11::module_& m);
void bind_vector(pybind11::module_& m);
void bind_workload(pybind11::module_& m);

}  // namespace seer::bindings
