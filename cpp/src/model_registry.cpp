#include "seer/model_registry.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

#include "aircraft/aircraft.hpp"
#include "faulty/faulty.hpp"
#include "pcs/pcs.hpp"
#include "phold/phold.hpp"

namespace seer {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, ModelFactory> factories;
};

// Built-in models are registered explicitly (static initializers in a static
// library are dropped by the linker).
Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->factories["faulty"] = make_faulty;  // test model: deliberate contract breaches
    reg->factories["phold"] = make_phold;
    reg->factories["pcs"] = make_pcs;
    reg->factories["aircraft"] = aircraft::make_aircraft;
    return reg;
  }();
  return *r;
}

}  // namespace

void register_model(const std::string& name, ModelFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[name] = std::move(factory);
}

std::unique_ptr<Model> make_model(const std::string& name, Config config) {
  ModelFactory factory;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.factories.find(name);
    if (it == r.factories.end()) {
      std::string known;
      for (const auto& [n, f] : r.factories) known += (known.empty() ? "" : ", ") + n;
      throw std::invalid_argument("model must be one of " + known + "; got '" + name + "'");
    }
    factory = it->second;
  }
  std::unique_ptr<Model> model = factory(config);
  config.reject_unknown(name);
  return model;
}

std::vector<std::string> model_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [n, f] : r.factories) names.push_back(n);
  return names;
}

}  // namespace seer
