// A 64-bit hash of byte strings, for state digests. Not cryptographic: it
// only has to make accidental equality of different states negligible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace seer {

class Digest {
 public:
  void add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    while (size >= 8) {
      std::uint64_t word;
      std::memcpy(&word, bytes, 8);
      mix(word);
      bytes += 8;
      size -= 8;
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, bytes, size);
    mix(tail ^ (static_cast<std::uint64_t>(size) << 56));
  }
  template <class T>
  void add_value(const T& value) {
    add(&value, sizeof(T));
  }
  std::uint64_t value() const { return finalize(state_ ^ count_); }

 private:
  void mix(std::uint64_t word) {
    state_ = finalize(state_ ^ (word + 0x9E3779B97F4A7C15ULL * ++count_));
  }
  // splitmix64's finalizer: a strong 64-bit mixer.
  static std::uint64_t finalize(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_ = 0x243F6A8885A308D3ULL;
  std::uint64_t count_ = 0;
};

}  // namespace seer
