/* PHOLD as seer_env runs it (cpp/models/phold/phold.cpp), engine-neutral.
 *
 * `entities` entities start with `population` tokens each, the first due at
 * lookahead + exp(mean). Handling a token, an entity sends it on after
 * lookahead + exp(mean): with probability `remote` to a uniformly chosen
 * *other* entity, else to itself. work = 0 (no busy loop). Draws from the
 * entity's Philox stream in the order of the C++ model.
 *
 * The engine's glue defines the function this file declares,
 *
 *   static void phold_send(void *ctx, uint32_t target, double time, int kind);
 *
 * Events at or after end_time are handled but not counted (see pcs_model.h);
 * PHOLD_END marks the entity done (engines that end on a model condition
 * schedule it at end_time).
 */
#ifndef SEER_PEER_PHOLD_MODEL_H
#define SEER_PEER_PHOLD_MODEL_H

#include <stdint.h>

#include "phold_types.h"

static void phold_send(void *ctx, uint32_t target, double time, int kind);

static inline void phold_on_init(const phold_params *p, phold_entity *s, uint32_t self, void *ctx) {
  peer_rng_init(&s->rng, p->seed, self);
  for (uint32_t i = 0; i < p->population; ++i) {
    const double delay = p->lookahead + peer_exponential(&s->rng, p->mean);
    phold_send(ctx, self, 0.0 + delay, PHOLD_TOKEN);
  }
}

static inline void phold_on_event(const phold_params *p, phold_entity *s, uint32_t self,
                                  double now, int kind, void *ctx) {
  if (kind == PHOLD_END) {
    s->done = 1;
    return;
  }
  if (now < p->end_time) ++s->processed; /* later ones handled, not counted (pcs_model.h) */
  uint32_t target = self;
  if (p->entities > 1 && peer_uniform(&s->rng) < p->remote) {
    const uint32_t pick = (uint32_t)peer_below(&s->rng, p->entities - 1);
    target = pick >= self ? pick + 1 : pick;
  }
  const double delay = p->lookahead + peer_exponential(&s->rng, p->mean);
  phold_send(ctx, target, now + delay, PHOLD_TOKEN);
}

#endif
