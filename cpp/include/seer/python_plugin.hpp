// SDK header: turns a model factory into an importable Python extension
// module that seer_env.register_cpp_model() accepts. Included only by a
// user's plugin module (the runtime itself never includes Python).
//
//   std::unique_ptr<seer::Model> make_my_model(seer::Config& config);
//   seer::WorkloadDecl my_model_workload();   // its declaration (seer/workload.hpp)
//   SEER_MODEL_MODULE(_my_model, make_my_model, my_model_workload)
//
// defines `PyInit__my_model`; the module has one attribute, `model_plugin`, a
// PyCapsule named kPluginCapsuleName holding a static seer::ModelPlugin.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <memory>

#include "seer/plugin.hpp"

namespace seer::plugin_detail {

template <auto Factory>
Model* make(Config& config) {
  std::unique_ptr<Model> model = Factory(config);
  return model.release();
}

inline PyObject* make_module(PyModuleDef* def, const ModelPlugin* plugin) {
  PyObject* module = PyModule_Create(def);
  if (module == nullptr) return nullptr;
  PyObject* capsule =
      PyCapsule_New(const_cast<ModelPlugin*>(plugin), kPluginCapsuleName, nullptr);
  if (capsule == nullptr || PyModule_AddObject(module, "model_plugin", capsule) < 0) {
    Py_XDECREF(capsule);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}

}  // namespace seer::plugin_detail

// `module_name` must match the extension's file name (CMake target name).
#define SEER_MODEL_MODULE(module_name, factory, declaration)                          \
  static const ::seer::ModelPlugin seer_model_plugin_##module_name{                   \
      ::seer::plugin_abi(), __VERSION__, &::seer::plugin_detail::make<factory>,       \
      &declaration};                                                                  \
  static PyModuleDef seer_module_def_##module_name = {                                \
      PyModuleDef_HEAD_INIT, #module_name, "A seer_env model plugin.", -1, nullptr,   \
      nullptr, nullptr, nullptr, nullptr};                                            \
  PyMODINIT_FUNC PyInit_##module_name() {                                             \
    return ::seer::plugin_detail::make_module(&seer_module_def_##module_name,        \
                                              &seer_model_plugin_##module_name);     \
  }
