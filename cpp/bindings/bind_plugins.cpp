// seer_env._core.register_plugin: adds a separately compiled model (a
// ModelPlugin capsule, see seer/plugin.hpp) to this module's registry.
#include <pybind11/pybind11.h>

#include <memory>
#include <sstream>
#include <stdexcept>

#include "bindings.hpp"
#include "seer/model_registry.hpp"
#include "seer/plugin.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

std::string describe(const PluginAbi& abi) {
  std::ostringstream out;
  out << "abi v" << abi.version << ", _GLIBCXX_USE_CXX11_ABI=" << abi.cxx11_abi
      << ", sizeof(Event/ModelSpec/Context/Config/string/vector)=" << abi.sizeof_event << "/"
      << abi.sizeof_model_spec << "/" << abi.sizeof_context << "/" << abi.sizeof_config << "/"
      << abi.sizeof_string << "/" << abi.sizeof_vector;
  return out.str();
}

void register_plugin(const std::string& name, const py::object& capsule) {
  if (name.empty()) throw std::invalid_argument("name must be a non-empty string, got ''");
  if (!PyCapsule_IsValid(capsule.ptr(), kPluginCapsuleName)) {
    throw std::invalid_argument(std::string("plugin must be a PyCapsule named '") +
                                kPluginCapsuleName + "' (SEER_MODEL_MODULE's model_plugin), got " +
                                py::repr(capsule).cast<std::string>());
  }
  const auto* plugin =
      static_cast<const ModelPlugin*>(PyCapsule_GetPointer(capsule.ptr(), kPluginCapsuleName));
  const PluginAbi ours = plugin_abi();
  if (!(plugin->abi == ours)) {
    throw std::invalid_argument("plugin for model '" + name +
                                "' was built with an incompatible C++ ABI: plugin (" +
                                describe(plugin->abi) + ", compiler " + plugin->compiler +
                                ") vs seer_env._core (" + describe(ours) + ", compiler " +
                                __VERSION__ + "); rebuild it against this seer_env's headers");
  }
  // The plugin's module is never unloaded (CPython keeps extension modules), so
  // the function pointer stays valid for the life of the process.
  Model* (*make)(Config&) = plugin->make;
  register_model(name, plugin->declare(),
                 [make](Config& config) { return std::unique_ptr<Model>(make(config)); });
}

}  // namespace

void bind_plugins(py::module_& m) {
  m.def("register_plugin", &register_plugin, py::arg("name"), py::arg("plugin"),
        "Register a compiled model plugin (a ModelPlugin capsule) under `name`.");
  m.attr("plugin_abi_version") = kPluginAbiVersion;
}

}  // namespace seer::bindings
