#include "bindings.hpp"
#include "builtin_models.hpp"
#include "interrupt.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "seer_env's C++ runtime (private: use the seer_env package)";
  seer::register_builtin_models();
  seer::bindings::init_interrupts();
  seer::bindings::bind_errors(m);
  seer::bindings::bind_rng(m);
  seer::bindings::bind_simulation(m);
  seer::bindings::bind_vector(m);
  seer::bindings::bind_plugins(m);
  seer::bindings::bind_python_model(m);
  seer::bindings::bind_workload(m);
}
