// Built-in and user models by name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "seer/config.hpp"
#include "seer/model.hpp"

namespace seer {

using ModelFactory = std::function<std::unique_ptr<Model>(Config&)>;

// Registers a model under `name` (replacing an earlier one). Thread-safe.
void register_model(const std::string& name, ModelFactory factory);
// Builds a model; throws std::invalid_argument for unknown names, invalid
// or unknown config keys.
std::unique_ptr<Model> make_model(const std::string& name, Config config);
std::vector<std::string> model_names();

}  // namespace seer
