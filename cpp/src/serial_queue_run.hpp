// The SerialEventQueue's run: the current bucket's keys, sorted once and then
// popped front to back. Small buckets (the usual case) sort by rank: each
// key lands at the count of keys before it, found with comparisons that do
// not branch, so a random order costs no mispredictions; one jump on the
// size picks the fully unrolled sort for it. Keys are unique, so ranks are
// distinct. Larger buckets, and any with wide seqs, use std::sort.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "seer/event.hpp"
#include "compiler.hpp"
#include "serial_queue_key.hpp"

namespace seer::queue_run {

inline constexpr std::uint32_t kSmallRun = 8;  // buckets up to this size sort by rank

template <std::uint32_t kN>
inline void rank_sort(const QueueKey* in, QueueKey* run) {
  std::uint32_t rank[kN] = {};
#pragma GCC unroll 8
  for (std::uint32_t a = 1; a < kN; ++a) {
#pragma GCC unroll 8
    for (std::uint32_t c = 0; c < a; ++c) {
      const std::uint32_t less = key_before<false>(in[a], in[c], nullptr);
      rank[c] += less;
      rank[a] += 1 - less;
    }
  }
#pragma GCC unroll 8
  for (std::uint32_t a = 0; a < kN; ++a) run[rank[a]] = in[a];
}

// The `n` keys of `in` (unsorted) into `run`, sorted. Out of line: its
// unrolled sorts are large, and the bucket load that calls it is short.
template <bool kWide>
SEER_NOINLINE void sort_run(const QueueKey* in, std::uint32_t n, QueueKey* run, const Event* slab) {
  if (!kWide) {
    switch (n) {
      case 1: run[0] = in[0]; return;
      case 2: return rank_sort<2>(in, run);
      case 3: return rank_sort<3>(in, run);
      case 4: return rank_sort<4>(in, run);
      case 5: return rank_sort<5>(in, run);
      case 6: return rank_sort<6>(in, run);
      case 7: return rank_sort<7>(in, run);
      case 8: return rank_sort<8>(in, run);
      default: break;
    }
  }
  std::memcpy(run, in, sizeof(QueueKey) * n);
  std::sort(run, run + n,
            [slab](const QueueKey& a, const QueueKey& b) { return key_before<kWide>(a, b, slab); });
}

}  // namespace seer::queue_run
