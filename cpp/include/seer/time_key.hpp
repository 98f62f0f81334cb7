// Event times as unsigned integers with the same order, for event queues:
// one integer compare instead of a floating-point one, and bit tricks
// (radix buckets) that doubles do not allow.
#pragma once

#include <cstdint>
#include <cstring>

namespace seer {

// Flips the sign bit of non-negative values and every bit of negative ones.
// -0.0 becomes +0.0 first: they are equal times, so the key's tie-break
// (source, seq) must decide between them. Times are never NaN
// (Context::emit and Simulation::load refuse them).
inline std::uint64_t time_key(double t) {
  t += 0.0;
  std::uint64_t bits;
  std::memcpy(&bits, &t, sizeof(bits));
  return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
}

// The time of a key (+0.0 for a key of -0.0).
inline double key_time(std::uint64_t key) {
  const std::uint64_t bits = (key >> 63) != 0 ? key & ~(std::uint64_t{1} << 63) : ~key;
  double t;
  std::memcpy(&t, &bits, sizeof(t));
  return t;
}

}  // namespace seer
