// The SerialEventQueue's side heap: a 4-ary min-heap of QueueKeys in an array
// (children of i at 4i + 1 .. 4i + 4). It holds the events pushed into the
// bucket being drained (or before it) and, without a usable calendar width,
// every event: a complete queue by itself. The array and its size are the
// queue's; these are the two moves on it.
#pragma once

#include <cstdint>

#include "seer/event.hpp"
#include "compiler.hpp"
#include "serial_queue_key.hpp"

namespace seer::queue_heap {

// Places `key` at `keys[i]` (a hole at the end) and lets it rise.
template <bool kWide>
inline void sift_up(QueueKey* keys, std::uint32_t i, const QueueKey key, const Event* slab) {
  while (i != 0) {
    const std::uint32_t parent = (i - 1) / 4;
    if (!key_before<kWide>(key, keys[parent], slab)) break;
    keys[i] = keys[parent];
    i = parent;
  }
  keys[i] = key;
}

// Removes keys[0] from a heap whose last key is keys[n] (n keys remain): the
// hole walks down along the smallest children to a leaf (no comparison with
// the moved key on the way: it usually belongs near the bottom), then the
// last key fills it and rises as needed. kBranchy: the pop branches on its
// comparisons (for a heap in L3: see SerialEventQueue::kBranchlessMax).
// Out of line: most pops take the run's head, and pop stays short for them.
template <bool kWide, bool kBranchy>
SEER_NOINLINE void sift_down_last(QueueKey* keys, std::uint32_t n, const Event* slab) {
  std::uint32_t hole = 0;
  for (;;) {
    const std::uint32_t first = 4 * hole + 1;
    if (first + 3 < n) {
      std::uint32_t m;
      if constexpr (kBranchy) {
        m = first;
        for (std::uint32_t c = first + 1; c <= first + 3; ++c) {
          if (key_before<kWide>(keys[c], keys[m], slab)) {
            m = c;
            asm volatile("");  // keeps a branch: no conditional move here
          }
        }
      } else {
        const std::uint32_t a =
            key_before<kWide>(keys[first + 1], keys[first], slab) ? first + 1 : first;
        const std::uint32_t b =
            key_before<kWide>(keys[first + 3], keys[first + 2], slab) ? first + 3 : first + 2;
        m = key_before<kWide>(keys[b], keys[a], slab) ? b : a;
      }
      keys[hole] = keys[m];
      hole = m;
      continue;
    }
    if (first < n) {  // a last, partial group of children
      std::uint32_t m = first;
      for (std::uint32_t c = first + 1; c < n; ++c) {
        if (key_before<kWide>(keys[c], keys[m], slab)) m = c;
      }
      keys[hole] = keys[m];
      hole = m;
    }
    break;
  }
  sift_up<kWide>(keys, hole, keys[n], slab);
}

}  // namespace seer::queue_heap
