#include "seer/memory.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "platform.hpp"
#include "seer/model.hpp"

namespace seer {
namespace {

constexpr std::uint64_t kUnknown = platform::kUnknownBytes;

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > kUnknown / a) return kUnknown;
  return a * b;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > kUnknown - b ? kUnknown : a + b;
}

// The value of SEER_MEMORY_LIMIT: digits, then an optional unit (K, M, G, T,
// P: powers of 1024, as cgroup's memory.max and `docker --memory` write them;
// "KiB", "KB", "B" read alike), or "max" (no limit). Anything else, 0 and a
// count past 2**64 are refused: a typo must not silently become a limit of
// 0 or 8 bytes, or none at all.
std::uint64_t parse_memory_limit(const std::string& text) {
  const auto refuse = [&text](const char* why) -> std::uint64_t {
    throw std::invalid_argument("SEER_MEMORY_LIMIT must be a byte count such as 8589934592, 8G or 512MiB "
                                "(or max for no limit), got '" + text + "' (" + why + ")");
  };
  if (text == "max") return kUnknown;
  std::size_t i = 0;
  std::uint64_t value = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (kUnknown - digit) / 10) return refuse("too large");
    value = value * 10 + digit;
  }
  if (i == 0) return refuse("no digits");
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::string kUnits = "KMGTP";
  int shift = 0;
  if (!unit.empty() && kUnits.find(unit[0]) != std::string::npos) {
    shift = 10 * (1 + static_cast<int>(kUnits.find(unit[0])));
    unit.erase(0, 1);
    if (unit == "I" || unit == "IB" || unit == "B") unit.clear();
  } else if (unit == "B") {
    unit.clear();
  }
  if (!unit.empty()) return refuse("unknown unit");
  if (value == 0) return refuse("a limit of 0 bytes would refuse every env");
  if (shift != 0 && value > (kUnknown >> shift)) return refuse("too large");
  return value << shift;
}

}  // namespace

std::uint64_t MemoryEstimate::bytes() const {
  return saturating_add(saturating_add(saturating_mul(entities, bytes_per_entity),
                                       saturating_mul(pending_events, kBytesPerEvent)),
                        extra_bytes);
}

std::uint64_t available_memory() {
  if (const char* limit = std::getenv("SEER_MEMORY_LIMIT"); limit != nullptr && *limit != '\0') {
    return parse_memory_limit(limit);
  }
  return platform::available_memory_bytes();
}

std::uint64_t pending_event_limit(const ModelSpec& spec, std::uint64_t copies) {
  const std::uint64_t available = available_memory();
  if (available == kUnknown) return kUnknown;
  const std::uint64_t share = available / 2 / kBytesPerEvent / std::max<std::uint64_t>(copies, 1);
  return std::max(share, saturating_mul(spec.memory.pending_events, 2));
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000.0 && unit < 6) {
    value /= 1000.0;
    ++unit;
  }
  char out[32];
  std::snprintf(out, sizeof(out), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return out;
}

std::uint64_t instance_bytes(const ModelSpec& spec) {
  // float32 observations, float64 reward, two flags, int64 infos; x2 for Python's copies.
  const std::uint64_t per_agent = spec.obs_dim * 4 + 8 + 2 + spec.info_keys.size() * 8;
  return saturating_add(spec.memory.bytes(), saturating_mul(2 * per_agent, spec.num_agents));
}

void require_memory(const ModelSpec& spec, const std::string& knobs, std::uint64_t copies) {
  const MemoryEstimate& m = spec.memory;
  const std::uint64_t per_instance = instance_bytes(spec);
  const std::uint64_t needed = saturating_mul(per_instance, copies);
  const std::uint64_t available = available_memory();
  if (needed <= available) return;
  std::ostringstream out;
  out << spec.name << " with " << knobs;
  if (copies > 1) out << " x num_envs=" << copies;
  out << " needs about " << format_bytes(needed) << " of memory (" << m.entities
      << " entities x " << m.bytes_per_entity << " B + " << m.pending_events
      << " pending events x " << kBytesPerEvent << " B + "
      << format_bytes(per_instance - std::min(per_instance, m.entities * m.bytes_per_entity +
                                                                m.pending_events * kBytesPerEvent))
      << " of tables and outputs" << (copies > 1 ? ", per instance" : "") << ") but only "
      << format_bytes(available) << " is available; choose a smaller configuration";
  throw std::invalid_argument(out.str());
}

}  // namespace seer
