// A cache-line-aligned array of bytes, freed as it was allocated: the
// SerialEventQueue's heap and run (a key group then straddles no more lines
// than it must).
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace seer {

inline constexpr std::size_t kBufferAlignment = 64;  // a cache line

struct FreeAligned {
  void operator()(unsigned char* p) const {
    ::operator delete(p, std::align_val_t{kBufferAlignment});
  }
};
using AlignedBuffer = std::unique_ptr<unsigned char, FreeAligned>;

// `bytes` aligned to kBufferAlignment; throws std::bad_alloc.
inline unsigned char* allocate_aligned(std::size_t bytes) {
  return static_cast<unsigned char*>(::operator new(bytes, std::align_val_t{kBufferAlignment}));
}

// `bytes` aligned to kBufferAlignment, or nullptr.
inline unsigned char* allocate_aligned(std::size_t bytes, const std::nothrow_t&) noexcept {
  return static_cast<unsigned char*>(
      ::operator new(bytes, std::align_val_t{kBufferAlignment}, std::nothrow));
}

}  // namespace seer
