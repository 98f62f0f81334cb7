// seer_env._core.register_plugin: adds a separately compiled model (a
// ModelPlugin capsule, see seer/plugin.hpp) to this module's registry.
#include <pybind11/pybind11.h>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "bindings.hpp"
#include "model_registry.hpp"
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
  // A capsule is only a pointer: check every field before following any.
  const std::string which = "plugin for model '" + name + "'";
  if (plugin == nullptr) throw std::invalid_argument(which + " is a null ModelPlugin pointer");
  const PluginAbi ours = plugin_abi();
  if (!(plugin->abi == ours)) {
    throw std::invalid_argument("plugin for model '" + name +
                                "' was built with an incompatible C++ ABI: plugin (" +
                                describe(plugin->abi) + ", compiler " +
                                (plugin->compiler ? plugin->compiler : "(null)") +
                                ") vs seer_env._core (" + describe(ours) + ", compiler " +
                                __VERSION__ + "); rebuild it against this seer_env's headers");
  }
  if (plugin->make == nullptr || plugin->declare == nullptr) {
    throw std::invalid_argument(which + " has a null field (" +
                                (plugin->make == nullptr ? "make" : "declare") + " is null): build it with SEER_MODEL_MODULE");
  }
  // The plugin's module is never unloaded (CPython keeps extension modules), so
  // the function pointer stays valid for the life of the process.
  Model* (*make)(Config&) = plugin->make;
  register_model(name, plugin->declare(), [make, name](Config& config) {
    std::unique_ptr<Model> model(make(config));
    if (!model) throw std::runtime_error("plugin model '" + name + "': make() returned null");
    return model;
  });
}

}  // namespace

void bind_plugins(py::module_& m) {
  m.def("register_plugin", &register_plugin, py::arg("name"), py::arg("plugin"),
        "Register a compiled model plugin (a ModelPlugin capsule) under `name`.");
  m.attr("plugin_abi_version") = kPluginAbiVersion;
}

}  // namespace seer::bindings
