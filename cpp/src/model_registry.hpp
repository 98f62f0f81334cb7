// Models by name, each with its declaration (seer/workload.hpp).
//
// The runtime names no model: built-in models register themselves from
// cpp/models/ (register_builtin_models), user models through plugins.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "seer/config.hpp"
#include "seer/model.hpp"
#include "seer/workload.hpp"

namespace seer {

using ModelFactory = std::function<std::unique_ptr<Model>(Config&)>;

// Registers a model and its declaration under `name` (replacing an earlier
// one). Thread-safe.
void register_model(const std::string& name, WorkloadDecl decl, ModelFactory factory);
// Builds a model; throws std::invalid_argument for unknown names, invalid
// or unknown config keys, and std::logic_error when the model and its
// declaration disagree (a parameter read but not declared or declared but
// not read, keys that differ from the spec's).
// `used`, when given, receives every parameter's value as the model read it
// (Config::values_used: a Simulation's identity for save/load).
std::unique_ptr<Model> make_model(const std::string& name, Config config,
                                  std::map<std::string, double>* used = nullptr);
// The declaration registered under `name`; std::invalid_argument if none.
WorkloadDecl workload_decl(const std::string& name);
std::vector<std::string> model_names();

}  // namespace seer
