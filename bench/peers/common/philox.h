/* Per-entity random streams, word for word those of seer_env's runtime.
 *
 * Philox4x64-10 keyed (seed, entity), the counter incremented before each
 * block, the four words of a block used in order; uniform, exponential and
 * below() derived as in cpp/include/seer/rng.hpp. The peer models draw from
 * it in the order our C++ models do, so a peer engine that hands each entity
 * its events in time order reproduces seer's trajectory for the same seed:
 * the statistical check (bench/peers/agreement.py) can then also count exact
 * matches.
 *
 * Plain C99 with GCC's unsigned __int128 (every engine here builds with gcc).
 * The stream lives in the entity's state, so each engine's rollback
 * (checkpoints, state saving) restores it with the rest of the state.
 */
#ifndef SEER_PEER_PHILOX_H
#define SEER_PEER_PHILOX_H

#include <math.h>
#include <stdint.h>

typedef struct peer_rng {
  uint64_t buf[4];  /* the current block */
  uint64_t blocks;  /* blocks generated: the counter of the current block */
  uint64_t k0, k1;  /* key: seed, entity */
  uint32_t pos;     /* words of buf already used (4: refill first) */
  uint32_t pad;
} peer_rng;

static inline void peer_rng_init(peer_rng *r, uint64_t seed, uint64_t entity) {
  r->buf[0] = r->buf[1] = r->buf[2] = r->buf[3] = 0;
  r->blocks = 0;
  r->k0 = seed;
  r->k1 = entity;
  r->pos = 4;
  r->pad = 0;
}

static inline void peer_philox_block(uint64_t ctr, uint64_t k0, uint64_t k1, uint64_t out[4]) {
  const uint64_t m0 = 0xD2E7470EE14C6C93ULL, m1 = 0xCA5A826395121157ULL;
  const uint64_t w0 = 0x9E3779B97F4A7C15ULL, w1 = 0xBB67AE8584CAA73BULL;
  uint64_t c0 = ctr, c1 = 0, c2 = 0, c3 = 0;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k0 += w0, k1 += w1;
    const unsigned __int128 p0 = (unsigned __int128)m0 * c0;
    const unsigned __int128 p1 = (unsigned __int128)m1 * c2;
    const uint64_t hi0 = (uint64_t)(p0 >> 64), lo0 = (uint64_t)p0;
    const uint64_t hi1 = (uint64_t)(p1 >> 64), lo1 = (uint64_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

static inline uint64_t peer_rng_next(peer_rng *r) {
  if (r->pos == 4) {
    peer_philox_block(++r->blocks, r->k0, r->k1, r->buf);
    r->pos = 0;
  }
  return r->buf[r->pos++];
}

/* [0, 1) with 53 random bits. */
static inline double peer_uniform(peer_rng *r) {
  return (double)(peer_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Exponential with mean m (a true exponential: -m log(1 - u)). */
static inline double peer_exponential(peer_rng *r, double m) {
  return -m * log1p(-peer_uniform(r));
}

/* Uniform integer in [0, n), n >= 1: the high word of word * n. */
static inline uint64_t peer_below(peer_rng *r, uint64_t n) {
  return (uint64_t)(((unsigned __int128)peer_rng_next(r) * n) >> 64);
}

#endif
