// The Python extension module predprey._predprey: exports the model factory
// for seer_env.register_cpp_model (see predprey/__init__.py).
#include "predprey.hpp"
#include "seer/python_plugin.hpp"

SEER_MODEL_MODULE(_predprey, predprey::make_predprey, predprey::predprey_workload)
