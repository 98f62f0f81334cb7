// A model compiled outside seer_env (a "plugin"), handed to the runtime.
//
// A user's extension module builds its model against these headers and
// exports a ModelPlugin; seer_env.register_cpp_model() reads it and adds the
// factory to the registry of seer_env._core. C++ objects (Model, ModelSpec,
// Config, Context) then cross the boundary between two separately compiled
// modules, which is sound only when both were built with the same C++ ABI:
// the PluginAbi below records the facts that must agree, and registration
// refuses a plugin whose facts differ. No Python here: see python_plugin.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seer/config.hpp"
#include "seer/context.hpp"
#include "seer/event.hpp"
#include "seer/model.hpp"
#include "seer/workload.hpp"

namespace seer {

// Bump when a header change alters a type that crosses the boundary.
inline constexpr std::uint32_t kPluginAbiVersion = 6;  // 2: ModelPlugin::declare; 3: Model::has_step_begin, write_snapshots; 4: write_outputs; 5: Context::request_decision, decisions; 6: Model::action_mask, action_mask, Outputs::action_masks
// PyCapsule name of a ModelPlugin (python_plugin.hpp makes the capsule).
inline constexpr const char* kPluginCapsuleName = "seer_env.ModelPlugin";

// What both sides of the boundary must agree on. Sizes catch header drift and
// mismatched standard libraries; cxx11_abi catches libstdc++'s dual ABI.
struct PluginAbi {
  std::uint32_t version;
  std::int32_t cxx11_abi;  // _GLIBCXX_USE_CXX11_ABI, or -1 without libstdc++
  std::uint32_t sizeof_event;
  std::uint32_t sizeof_model_spec;
  std::uint32_t sizeof_context;
  std::uint32_t sizeof_config;
  std::uint32_t sizeof_string;
  std::uint32_t sizeof_vector;
};

inline bool operator==(const PluginAbi& a, const PluginAbi& b) {
  return a.version == b.version && a.cxx11_abi == b.cxx11_abi &&
         a.sizeof_event == b.sizeof_event && a.sizeof_model_spec == b.sizeof_model_spec &&
         a.sizeof_context == b.sizeof_context && a.sizeof_config == b.sizeof_config &&
         a.sizeof_string == b.sizeof_string && a.sizeof_vector == b.sizeof_vector;
}

// The facts of the translation unit that includes this header.
inline constexpr PluginAbi plugin_abi() {
  return PluginAbi{
      kPluginAbiVersion,
#ifdef _GLIBCXX_USE_CXX11_ABI
      _GLIBCXX_USE_CXX11_ABI,
#else
      -1,
#endif
      sizeof(Event),
      sizeof(ModelSpec),
      sizeof(Context),
      sizeof(Config),
      sizeof(std::string),
      sizeof(std::vector<int>),
  };
}

// What a plugin exports. `make` builds a model from its config (read every
// key through Params/Config; throw std::invalid_argument for bad values) and
// returns an object the runtime owns and deletes. `declare` returns the
// model's declaration (seer/workload.hpp), stored with the factory.
struct ModelPlugin {
  PluginAbi abi;
  const char* compiler;  // __VERSION__ of the plugin's compiler, for messages
  Model* (*make)(Config& config);
  WorkloadDecl (*declare)();
};

}  // namespace seer
