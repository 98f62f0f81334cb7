#include "bindings.hpp"
#include "builtin_models.hpp"
#include "comparison_executors.hpp"
#include "simulation/interrupt.hpp"
#include "test_models.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "seer_env's C++ runtime (private: use the seer_env package)";
  seer::register_builtin_models();
  seer::register_comparison_executors();
  seer::bindings::init_interrupts();
  seer::bindings::bind_errors(m);
  seer::bindings::bind_rng(m);
  seer::bindings::bind_simulation(m);
  seer::bindings::bind_vector(m);
  seer::bindings::bind_dicts(m);
  seer::bindings::bind_plugins(m);
  seer::bindings::bind_python_model(m);
  seer::bindings::bind_numba_model(m);
  seer::bindings::bind_workload(m);
  // The test-only models (faulty) are compiled in but registered only on
  // request, so model_names() lists the models users have.
  m.def("_register_test_models", &seer::register_test_models,
        "Registers the test-only models (faulty). For seer_env's own tests.");
}
