#include "model_registry.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

namespace seer {
namespace {

struct Entry {
  WorkloadDecl decl;
  ModelFactory factory;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, Entry> entries;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: plugins may outlive static teardown
  return *r;
}

Entry find(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.entries.find(name);
  if (it == r.entries.end()) {
    std::string known;
    for (const auto& [n, e] : r.entries) known += (known.empty() ? "" : ", ") + n;
    // A plugin model registers when its package is imported: say so, the
    // usual cause of an unknown name is a package not imported yet.
    throw std::invalid_argument(
        "model must be one of " + known + "; got '" + name +
        "' (a C++ plugin model is registered by importing its package, or by "
        "seer_env.register_cpp_model(name, module); a PythonModel is passed as its class)");
  }
  return it->second;
}

void require_same_keys(const std::string& model, const char* what,
                       const std::vector<std::string>& declared,
                       const std::vector<std::string>& built) {
  if (declared != built) {
    throw std::logic_error("model " + model + ": its spec's " + what +
                           " differ from its declaration's");
  }
}

// A model and its declaration must agree on what it reads and reports.
void check_against_declaration(const std::string& name, const WorkloadDecl& decl,
                               const Config& config, const Model& model) {
  for (const std::string& key : config.keys_read()) {
    if (decl.find_param(key) == nullptr) {
      throw std::logic_error("model " + name + " reads config key '" + key +
                             "' that its declaration lacks");
    }
  }
  for (const ParamDecl& p : decl.params) {
    if (config.keys_read().count(p.name) == 0) {
      throw std::logic_error("model " + name + " declares parameter '" + p.name +
                             "' but never reads it");
    }
  }
  const ModelSpec& spec = model.spec();
  require_same_keys(name, "info keys", decl.info_keys, spec.info_keys);
  require_same_keys(name, "total keys", decl.total_keys, spec.total_keys);
  require_same_keys(name, "event kinds", decl.event_kinds, spec.event_kinds);
  if (decl.action_mask != spec.action_mask) {
    throw std::logic_error("model " + name + ": its spec's action_mask differs from its "
                           "declaration's");
  }
  if (spec.action_mask && !spec.action.discrete) {
    throw std::logic_error("model " + name + " declares action_mask with a Box action space: "
                           "a mask needs a Discrete one");
  }
  const RecordDecl* state = decl.find_record("state");
  if (state != nullptr && state->size != model.entity_state_size()) {
    throw std::logic_error("model " + name + ": declared state record has " +
                           std::to_string(state->size) + " bytes, the model " +
                           std::to_string(model.entity_state_size()));
  }
  const RecordDecl* pub = decl.find_record("public");
  if (pub != nullptr && pub->size != model.public_size()) {
    throw std::logic_error("model " + name + ": declared public record has " +
                           std::to_string(pub->size) + " bytes, the model " +
                           std::to_string(model.public_size()));
  }
}

}  // namespace

void register_model(const std::string& name, WorkloadDecl decl, ModelFactory factory) {
  if (decl.action_mask && decl.action.dtype == "float32") {
    // A Box action space (its actions are float32 vectors): nothing to mask.
    throw std::invalid_argument("model " + name +
                                " declares action_mask with a Box action space (float32 "
                                "actions): an action mask needs a Discrete one");
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.entries[name] = Entry{std::move(decl), std::move(factory)};
}

std::unique_ptr<Model> make_model(const std::string& name, Config config,
                                  std::map<std::string, double>* used) {
  const Entry entry = find(name);
  std::unique_ptr<Model> model = entry.factory(config);
  config.reject_unknown(name);
  check_against_declaration(name, entry.decl, config, *model);
  if (used != nullptr) *used = config.values_used();
  return model;
}

WorkloadDecl workload_decl(const std::string& name) { return find(name).decl; }

std::vector<std::string> model_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [n, e] : r.entries) names.push_back(n);
  return names;
}

}  // namespace seer
