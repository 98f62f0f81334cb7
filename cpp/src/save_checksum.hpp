// The save format's checksum: four Digest-style lanes over interleaved
// 8-byte words, folded together. One lane is a dependency chain of two
// multiplies per word (~1.4 GB/s); four independent ones let the CPU overlap
// them, so a 30 MB snapshot is checked in a few milliseconds.
// seer_env/testing/save_format.py mirrors it (tests and the fuzzer re-sign
// crafted blobs with it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace seer {

inline std::uint64_t save_mix(std::uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Word i (little-endian, 8 bytes) goes to lane i % 4, mixed with its index;
// the tail (size % 8 bytes) and the size close it.
inline std::uint64_t save_checksum(const char* data, std::size_t size) {
  std::uint64_t lane[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL,
                           0x082EFA98EC4E6C89ULL};
  const std::size_t words = size / 8;
  std::size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    for (std::size_t k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, data + 8 * (i + k), 8);
      lane[k] = save_mix(lane[k] ^ (w + 0x9E3779B97F4A7C15ULL * (i + k + 1)));
    }
  }
  for (; i < words; ++i) {
    std::uint64_t w;
    std::memcpy(&w, data + 8 * i, 8);
    lane[i % 4] = save_mix(lane[i % 4] ^ (w + 0x9E3779B97F4A7C15ULL * (i + 1)));
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, data + 8 * words, size % 8);
  std::uint64_t h = save_mix(tail ^ (static_cast<std::uint64_t>(size) << 8));
  for (std::uint64_t l : lane) h = save_mix(h ^ l);
  return h;
}

}  // namespace seer
