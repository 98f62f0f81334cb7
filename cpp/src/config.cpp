#include "seer/config.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace seer {
namespace {

std::string format_number(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

}  // namespace

double Config::real(const std::string& key, double fallback, double lo, double hi, bool lo_open) {
  read_.insert(key);
  const auto it = values_.find(key);
  const double v = it == values_.end() ? fallback : it->second;
  const bool below = lo_open ? !(v > lo) : !(v >= lo);
  if (!std::isfinite(v) || below || v > hi) {
    throw std::invalid_argument(key + " must be a finite number in " + (lo_open ? "(" : "[") +
                                format_number(lo) + ", " + format_number(hi) + "], got " +
                                format_number(v));
  }
  used_[key] = v;
  return v;
}

std::int64_t Config::integer(const std::string& key, std::int64_t fallback, std::int64_t lo,
                             std::int64_t hi) {
  read_.insert(key);
  const auto it = values_.find(key);
  if (it == values_.end()) {
    used_[key] = static_cast<double>(fallback);
    return fallback;
  }
  const double v = it->second;
  if (!std::isfinite(v) || v != std::floor(v) || v < static_cast<double>(lo) ||
      v > static_cast<double>(hi)) {
    throw std::invalid_argument(key + " must be an integer in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + format_number(v));
  }
  used_[key] = v;
  return static_cast<std::int64_t>(v);
}

void Config::reject_unknown(const std::string& model_name) const {
  for (const auto& [key, value] : values_) {
    if (read_.count(key) == 0) {
      throw std::invalid_argument("unknown config key '" + key + "' for model " + model_name +
                                  " (value " + format_number(value) + ")");
    }
  }
}

}  // namespace seer
