/* PCS as seer_env runs it (cpp/models/pcs/pcs.cpp, pcs_v0), engine-neutral.
 *
 * The handlers of our C++ model, line for line, with no guard channels (the
 * action 0 that Simulation.run_until leaves in place): phones walk a
 * width x height 4-neighbour torus, exponential call interval, call duration
 * and move interval, a handoff arrives exactly handoff_delay (the lookahead)
 * after it leaves, an idle phone whose next call falls in another cell before
 * now + handoff_delay has that call moved to now + handoff_delay. One pending
 * event per phone. Random draws come from the cell's own Philox stream in the
 * order of the C++ model (philox.h).
 *
 * Each engine's glue (bench/peers/<engine>/pcs.c) defines the function this
 * file declares,
 *
 *   static void pcs_send(void *ctx, uint32_t target, double time, int kind,
 *                        const pcs_phone *phone);
 *
 * which schedules `kind` for cell `target` at absolute time `time` with a copy
 * of `phone` as payload. Only events before end_time are counted: an engine
 * that stops some time after the end time (when its GVT passes it) handles
 * the later ones as usual, so that events keep flowing until it does (ROOT-Sim
 * 3.0's parallel engine could spin forever once its queues ran dry), and
 * counts them in `past`, never reported. PCS_END, scheduled by engines that
 * end on a model condition, marks the cell done at end_time.
 */
#ifndef SEER_PEER_PCS_MODEL_H
#define SEER_PEER_PCS_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pcs_types.h"

#define PCS_NO_CHANNEL 0xFFFFFFFFu
#define PCS_MAX_LOOP_DRAWS (1u << 22) /* as the C++ model: no handler loops unbounded */

static void pcs_send(void *ctx, uint32_t target, double time, int kind, const pcs_phone *phone);

static inline uint32_t pcs_neighbour(const pcs_params *p, uint32_t cell, uint64_t direction) {
  uint32_t x = cell % p->width, y = cell / p->width;
  switch (direction) {
    case 0: x = (x + p->width - 1) % p->width; break;
    case 1: x = (x + 1) % p->width; break;
    case 2: y = (y + p->height - 1) % p->height; break;
    default: y = (y + 1) % p->height; break;
  }
  return y * p->width + x;
}

static inline double pcs_earliest_cross(const pcs_params *p, double now) {
  const double t = now + p->handoff_delay;
  return t > now ? t : nextafter(now, HUGE_VAL);
}

static inline void pcs_stalled(const char *what, const pcs_phone *phone, double t) {
  fprintf(stderr, "pcs: phone %u drew more than %u %s in one handler (t=%g)\n", phone->id,
          PCS_MAX_LOOP_DRAWS, what, t);
  abort();
}

static inline uint32_t pcs_free_channels(const pcs_params *p, const pcs_cell *s) {
  return p->channels - (uint32_t)__builtin_popcountll(s->channel_mask);
}

static inline void pcs_take_channel(pcs_cell *s, pcs_phone *phone) {
  phone->channel = (uint32_t)__builtin_ctzll(~s->channel_mask); /* lowest free, as ours */
  s->channel_mask |= 1ULL << phone->channel;
}

static inline void pcs_release_channel(const pcs_params *p, pcs_cell *s, pcs_phone *phone) {
  if (phone->channel >= p->channels || !((s->channel_mask >> phone->channel) & 1u)) {
    fprintf(stderr, "pcs: phone %u releases channel %u it does not hold\n", phone->id,
            phone->channel);
    abort();
  }
  s->channel_mask &= ~(1ULL << phone->channel);
  phone->channel = PCS_NO_CHANNEL;
}

/* Walks an idle phone and sends its NEXT_CALL where it ends up. */
static inline void pcs_schedule_idle(const pcs_params *p, pcs_cell *s, uint32_t self, double now,
                                     pcs_phone phone, void *ctx) {
  uint32_t cell = self;
  uint64_t draws = 0;
  for (;;) {
    while (phone.next_move < phone.next_call) {
      if (++draws > PCS_MAX_LOOP_DRAWS) pcs_stalled("moves", &phone, phone.next_move);
      cell = pcs_neighbour(p, cell, peer_below(&s->rng, 4));
      phone.next_move += peer_exponential(&s->rng, p->move_interval);
    }
    const double earliest = cell == self ? now : pcs_earliest_cross(p, now);
    if (phone.next_call >= earliest) break;
    phone.next_call = earliest;
  }
  pcs_send(ctx, cell, phone.next_call, PCS_NEXT_CALL, &phone);
}

/* The first of call end (CALL_END) and next move (HANDOFF_OUT), both to self. */
static inline void pcs_schedule_in_call(uint32_t self, const pcs_phone *phone, void *ctx) {
  if (phone->next_move < phone->call_end) {
    pcs_send(ctx, self, phone->next_move, PCS_HANDOFF_OUT, phone);
  } else {
    pcs_send(ctx, self, phone->call_end, PCS_CALL_END, phone);
  }
}

/* The cell's phones at time 0; the cell's state is zeroed by the caller. */
static inline void pcs_on_init(const pcs_params *p, pcs_cell *s, uint32_t self, void *ctx) {
  peer_rng_init(&s->rng, p->seed, self);
  for (uint32_t i = 0; i < p->phones_per_cell; ++i) {
    pcs_phone phone;
    phone.id = self * p->phones_per_cell + i;
    phone.channel = PCS_NO_CHANNEL;
    phone.call_end = HUGE_VAL;
    phone.next_call = peer_exponential(&s->rng, p->call_interval);
    phone.next_move = peer_exponential(&s->rng, p->move_interval);
    pcs_schedule_idle(p, s, self, 0.0, phone, ctx);
  }
}

static inline void pcs_on_event(const pcs_params *p, pcs_cell *s, uint32_t self, double now,
                                int kind, const pcs_phone *in, void *ctx) {
  if (kind == PCS_END) {
    s->done = 1;
    return;
  }
  pcs_counters *c = now < p->end_time ? &s->c : &s->past;
  pcs_phone phone = *in;
  ++c->events;
  switch (kind) {
    case PCS_NEXT_CALL: {
      ++c->call_attempts;
      if (pcs_free_channels(p, s) <= s->guard) {
        ++c->blocks;
        phone.next_call = now + peer_exponential(&s->rng, p->call_interval);
        pcs_schedule_idle(p, s, self, now, phone, ctx);
        return;
      }
      pcs_take_channel(s, &phone);
      phone.call_end = now + peer_exponential(&s->rng, p->call_duration);
      phone.next_call = now + peer_exponential(&s->rng, p->call_interval);
      uint64_t draws = 0;
      while (phone.next_call < phone.call_end) {
        if (++draws > PCS_MAX_LOOP_DRAWS) pcs_stalled("busy lines", &phone, phone.next_call);
        ++c->busy_lines;
        ++c->call_attempts;
        phone.next_call += peer_exponential(&s->rng, p->call_interval);
      }
      pcs_schedule_in_call(self, &phone, ctx);
      return;
    }
    case PCS_CALL_END:
      pcs_release_channel(p, s, &phone);
      phone.call_end = HUGE_VAL;
      pcs_schedule_idle(p, s, self, now, phone, ctx);
      return;
    case PCS_HANDOFF_OUT: {
      pcs_release_channel(p, s, &phone);
      const uint32_t target = pcs_neighbour(p, self, peer_below(&s->rng, 4));
      pcs_send(ctx, target, pcs_earliest_cross(p, now), PCS_HANDOFF_IN, &phone);
      return;
    }
    case PCS_HANDOFF_IN:
      ++c->handoffs_in;
      phone.next_move = now + peer_exponential(&s->rng, p->move_interval);
      if (pcs_free_channels(p, s) == 0) {
        ++c->dropped_handoffs;
        phone.call_end = HUGE_VAL;
        pcs_schedule_idle(p, s, self, now, phone, ctx);
        return;
      }
      pcs_take_channel(s, &phone);
      if (phone.call_end < now) phone.call_end = now; /* ended in transit */
      pcs_schedule_in_call(self, &phone, ctx);
      return;
    default:
      fprintf(stderr, "pcs: unknown event kind %d\n", kind);
      abort();
  }
}

#endif
