// The compiler builtins the runtime uses, in one place: GCC/Clang spell them
// __builtin_*, MSVC has its own intrinsics, anything else gets a plain
// equivalent (a hint that does nothing, a loop).
#pragma once

#include <cstdint>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

// Starts loading the cache line of `address` (a hint: never faults).
#if defined(__GNUC__) || defined(__clang__)
#define SEER_PREFETCH(address) __builtin_prefetch(address)
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#define SEER_PREFETCH(address) _mm_prefetch(reinterpret_cast<const char*>(address), _MM_HINT_T0)
#else
#define SEER_PREFETCH(address) ((void)(address))
#endif

// For a helper that only prefetches. GCC counts a prefetch as no side
// effect: such a helper can be found pure and the call, whose result nobody
// uses, deleted before it is inlined (GCC 12 dropped every prefetch of
// LocalQueue::prefetch_heap so). Inlined always, its prefetches stay.
#if defined(__GNUC__) || defined(__clang__)
#define SEER_PREFETCH_HELPER [[gnu::always_inline]] inline
#elif defined(_MSC_VER)
#define SEER_PREFETCH_HELPER __forceinline
#else
#define SEER_PREFETCH_HELPER inline
#endif

// Kept out of line: a slower path that must not grow its hot caller.
#if defined(__GNUC__) || defined(__clang__)
#define SEER_NOINLINE [[gnu::noinline]]
#elif defined(_MSC_VER)
#define SEER_NOINLINE __declspec(noinline)
#else
#define SEER_NOINLINE
#endif

// `condition`, expected to be false (branch layout only).
#if defined(__GNUC__) || defined(__clang__)
#define SEER_UNLIKELY(condition) __builtin_expect(!!(condition), 0)
#else
#define SEER_UNLIKELY(condition) (!!(condition))
#endif

namespace seer {

// The index of the lowest set bit of `word`, which is not 0.
inline unsigned lowest_set_bit(std::uint64_t word) {
#if defined(__GNUC__) || defined(__clang__)
  return static_cast<unsigned>(__builtin_ctzll(word));
#elif defined(_MSC_VER) && defined(_M_X64)
  unsigned long index = 0;
  _BitScanForward64(&index, word);
  return static_cast<unsigned>(index);
#else
  unsigned index = 0;
  while ((word & 1U) == 0) {
    word >>= 1;
    ++index;
  }
  return index;
#endif
}

// How many bits of `word` are set.
inline unsigned set_bit_count(std::uint64_t word) {
#if defined(__GNUC__) || defined(__clang__)
  return static_cast<unsigned>(__builtin_popcountll(word));
#else
  unsigned count = 0;
  for (; word != 0; word &= word - 1) ++count;
  return count;
#endif
}

}  // namespace seer
