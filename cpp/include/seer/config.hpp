// Model configuration: named numeric values, validated on read.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace seer {

// A flat map of numeric settings. Readers validate each value and throw
// std::invalid_argument (-> ValueError) naming the key and the value.
// Not thread-safe; used only while building a model.
class Config {
 public:
  Config() = default;
  explicit Config(std::map<std::string, double> values) : values_(std::move(values)) {}

  void set(const std::string& key, double value) { values_[key] = value; }
  bool has(const std::string& key) const { return values_.count(key) != 0; }

  // A real value in [lo, hi]; `lo_open` excludes lo itself.
  double real(const std::string& key, double fallback, double lo, double hi,
              bool lo_open = false);
  // An integer value in [lo, hi].
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi);
  // Throws if a key was set that no reader asked for (a typo, usually).
  void reject_unknown(const std::string& model_name) const;
  // The keys a reader asked for (set or not): checked against the declaration.
  const std::set<std::string>& keys_read() const { return read_; }
  // Every value a reader got, set or its default: the configuration the
  // model was built with (a save records it; load refuses another).
  const std::map<std::string, double>& values_used() const { return used_; }

 private:
  std::map<std::string, double> values_;
  std::map<std::string, double> used_;
  std::set<std::string> read_;
};

}  // namespace seer
