// The SerialEventQueue's key of an event: (time, source, seq) packed into two
// words that compare as one 128-bit number, and the slot of the event.
//
// Doubles map to unsigned integers in the same order (time_key), and
// source << 32 | seq is the tie-break (tie_key). That packing is exact while
// every seq is below 2^32 - 1; a larger seq saturates, and from then on
// ("wide" seqs) comparisons of equal keys read seq from the event itself.
#pragma once

#include <cstdint>
#include <cstring>

#include "seer/event.hpp"

namespace seer {

struct QueueKey {
  std::uint64_t time;  // time_key(event.time)
  std::uint64_t tie;   // tie_key(event.source, event.seq)
  std::uint32_t slot;  // the event in the queue's slab
  std::uint32_t unused;
};
static_assert(sizeof(QueueKey) == 24, "key layout");

inline constexpr std::uint64_t kSeqCap = 0xFFFFFFFFull;  // seqs from here on saturate

// Doubles map to unsigned integers in the same order (negatives flipped,
// the sign bit set on the rest); -0.0 first becomes +0.0, since the two
// compare equal as times.
inline std::uint64_t time_key(double t) {
  t += 0.0;  // -0.0 + 0.0 == +0.0 under round-to-nearest
  std::uint64_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
}

inline double key_time(std::uint64_t key) {
  const std::uint64_t bits = (key >> 63) != 0 ? key & ~(std::uint64_t{1} << 63) : ~key;
  double t;
  std::memcpy(&t, &bits, sizeof t);
  return t;
}

inline std::uint64_t tie_key(EntityId source, std::uint64_t seq) {
  return std::uint64_t{source} << 32 | (seq < kSeqCap ? seq : kSeqCap);
}

// a before b in (time, source, seq). Without wide seqs the two words
// decide (keys are unique); with them, equal words mean two saturated
// seqs of one source at one time, and the events' seqs (in `slab`) decide.
template <bool kWide>
inline bool key_before(const QueueKey& a, const QueueKey& b, const Event* slab) {
#if defined(__SIZEOF_INT128__)
  const unsigned __int128 x = static_cast<unsigned __int128>(a.time) << 64 | a.tie;
  const unsigned __int128 y = static_cast<unsigned __int128>(b.time) << 64 | b.tie;
  if (kWide && x == y) return slab[a.slot].seq < slab[b.slot].seq;
  return x < y;
#else
  if (a.time != b.time) return a.time < b.time;
  if (kWide && a.tie == b.tie) return slab[a.slot].seq < slab[b.slot].seq;
  return a.tie < b.tie;
#endif
}

}  // namespace seer
