#include "bindings.hpp"
#include "builtin_models.hpp"
#include "comparison_executors.hpp"
#include "simulation/interrupt.hpp"
#ifdef SEER_TEST_MODELS
#include "test_models.hpp"
#endif

PYBIND11_MODULE(_core, m) {
  m.doc() = "seer_env's C++ runtime (private: use the seer_env package)";
  seer::register_builtin_models();
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
  // The benchmark's comparison executors are compiled in but registered only on
  // request (by the bench and the tests), so executor_names() lists what users run.
  m.def("_register_comparison_executors", &seer::register_comparison_executors,
        "Registers the comparison executors (locked, barrier). For the bench and the tests.");
#ifdef SEER_TEST_MODELS
  // The test-only models (faulty): in a build for the checkout's tests only
  // (SEER_BUILD_TEST_MODELS), registered only on request.
  m.def("_register_test_models", &seer::register_test_models,
        "Registers the test-only models (faulty). For seer_env's own tests.");
#endif
}
