// Per-entity counter-based random streams: Philox4x64-10.
//
// Why Philox4x64 and not 4x32: numpy.random.Philox is Philox4x64-10, and the
// Python reference models must draw exactly our numbers through numpy. The
// stream of entity `e` under seed `s` is numpy's
//     numpy.random.Philox(key=s | (e << 64))      # key words [s, e]
// whose raw 64-bit outputs we reproduce word for word:
//   * the 256-bit counter starts at 0 and is incremented *before* each block
//     (so the first block uses counter 1); we keep the low word only
//     (2^64 blocks per entity and episode is more than enough);
//   * a block yields four words, consumed in order.
// Derived values (same recipe in seer_env/testing/rng.py):
//   uniform()        = (raw >> 11) * 2^-53              in [0, 1)
//   exponential(m)   = -m * log1p(-uniform())           (glibc log1p)
//   below(n)         = (raw * n) >> 64 (128-bit product) in [0, n)
#pragma once

#include <cmath>
#include <cstdint>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

namespace seer {

namespace rng_detail {

// The 128-bit product of a and b: its high word, and its low word in `low`.
// __int128 where the compiler has it, MSVC's _umul128 on x64, else four
// 32-bit products (the same bits; a test compares them with __int128's).
inline std::uint64_t multiply_wide_portable(std::uint64_t a, std::uint64_t b,
                                            std::uint64_t* low) {
  const std::uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32;
  const std::uint64_t b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  *low = (middle << 32) | (p00 & 0xFFFFFFFFu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
}

inline std::uint64_t multiply_wide(std::uint64_t a, std::uint64_t b, std::uint64_t* low) {
#if defined(__SIZEOF_INT128__)
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  *low = static_cast<std::uint64_t>(p);
  return static_cast<std::uint64_t>(p >> 64);
#elif defined(_MSC_VER) && defined(_M_X64)
  std::uint64_t high = 0;
  *low = _umul128(a, b, &high);
  return high;
#else
  return multiply_wide_portable(a, b, low);
#endif
}

}  // namespace rng_detail

class Philox4x64 {
 public:
  using Block = std::uint64_t[4];

  // One Philox4x64-10 block for counter `ctr` and key (k0, k1).
  static void block(const std::uint64_t ctr_in[4], std::uint64_t k0, std::uint64_t k1,
                    std::uint64_t out[4]) {
    constexpr std::uint64_t kM0 = 0xD2E7470EE14C6C93ULL;
    constexpr std::uint64_t kM1 = 0xCA5A826395121157ULL;
    constexpr std::uint64_t kW0 = 0x9E3779B97F4A7C15ULL;
    constexpr std::uint64_t kW1 = 0xBB67AE8584CAA73BULL;
    std::uint64_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
    // Ten rounds, the key bumped before each but the first. Unrolled by
    // hand: as a loop with a round-0 test, -O2 spent ~290 instructions per
    // block on what is ~100 of arithmetic (callgrind, serial PHOLD).
    auto round = [&] {
      std::uint64_t lo0 = 0, lo1 = 0;
      const std::uint64_t hi0 = rng_detail::multiply_wide(kM0, c0, &lo0);
      const std::uint64_t hi1 = rng_detail::multiply_wide(kM1, c2, &lo1);
      c0 = hi1 ^ c1 ^ k0;
      c1 = lo1;
      c2 = hi0 ^ c3 ^ k1;
      c3 = lo0;
    };
    auto bump = [&] {
      k0 += kW0;
      k1 += kW1;
    };
    round();
    bump(), round();
    bump(), round();
    bump(), round();
    bump(), round();
    bump(), round();
    bump(), round();
    bump(), round();
    bump(), round();
    bump(), round();
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
  }
};

// The random stream of one entity. Entity-local state: only the handler of
// that entity draws from it. Not thread-safe (it needs not be).
class EntityRng {
 public:
  EntityRng() = default;
  EntityRng(std::uint64_t seed, std::uint64_t entity) : k0_(seed), k1_(entity) {}

  std::uint64_t next_u64() {
    if (pos_ == 4) refill();
    return buf_[pos_++];
  }
  double uniform() { return unit(next_u64()); }
  // The uniform double of a raw word, in [0, 1).
  static double unit(std::uint64_t word) { return static_cast<double>(word >> 11) * 0x1.0p-53; }
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }
  // Uniform integer in [0, n); n >= 1.
  std::uint64_t below(std::uint64_t n) {
    std::uint64_t low = 0;
    return rng_detail::multiply_wide(next_u64(), n, &low);
  }

  // Position in the stream: blocks generated and words used of the last one.
  // (blocks, used) is everything needed to save and restore the stream.
  std::uint64_t blocks() const { return blocks_; }
  std::uint32_t used() const { return pos_; }
  void restore(std::uint64_t seed, std::uint64_t entity, std::uint64_t blocks,
               std::uint32_t used) {
    k0_ = seed;
    k1_ = entity;
    blocks_ = blocks;
    pos_ = 4;
    if (blocks_ > 0) {
      const std::uint64_t ctr[4] = {blocks_, 0, 0, 0};
      Philox4x64::block(ctr, k0_, k1_, buf_);
      pos_ = used;
    }
  }

 private:
  void refill() {
    ++blocks_;
    const std::uint64_t ctr[4] = {blocks_, 0, 0, 0};
    Philox4x64::block(ctr, k0_, k1_, buf_);
    pos_ = 0;
  }

  // Compiled handlers' draws (compiled_model.cpp): the buffered word inline,
  // the refill out of line.
  friend struct CompiledDraws;
  // Every draw reads buf_ and pos_, a refill the rest: the key's second word
  // goes last, so a record behind an 8-byte field (EntityRuntime) still keeps
  // all but it in one cache line.
  std::uint64_t buf_[4] = {0, 0, 0, 0};
  std::uint32_t pos_ = 4;
  std::uint64_t blocks_ = 0;
  std::uint64_t k0_ = 0, k1_ = 0;
};

}  // namespace seer
