/* PCS's records, defaults and PEER line, without the handlers (pcs_model.h):
 * what a runner's main needs. */
#ifndef SEER_PEER_PCS_TYPES_H
#define SEER_PEER_PCS_TYPES_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "philox.h"

enum { PCS_NEXT_CALL = 0, PCS_CALL_END = 1, PCS_HANDOFF_OUT = 2, PCS_HANDOFF_IN = 3, PCS_END = 4 };

typedef struct pcs_params {
  uint32_t width, height, channels, phones_per_cell;
  double call_interval, call_duration, move_interval, handoff_delay;
  double end_time;
  uint64_t seed;
} pcs_params;

/* The defaults of pcs_v0 (cpp/models/pcs/workload.cpp). */
static inline pcs_params pcs_default_params(void) {
  pcs_params p = {32, 32, 10, 16, 360.0, 180.0, 4500.0, 1.0, 600.0, 0};
  return p;
}

typedef struct pcs_phone {
  double next_call, call_end, next_move;
  uint32_t id, channel;
} pcs_phone;

typedef struct pcs_counters {
  uint64_t call_attempts, blocks, busy_lines, handoffs_in, dropped_handoffs, events;
} pcs_counters;

typedef struct pcs_cell {
  peer_rng rng;
  uint64_t channel_mask;
  uint32_t guard;
  uint32_t done;     /* PCS_END handled */
  pcs_counters c;    /* events before end_time: what the PEER line reports */
  pcs_counters past; /* events at or after end_time (pcs_model.h) */
} pcs_cell;

static inline void pcs_add_counters(pcs_counters *sum, const pcs_counters *c) {
  sum->call_attempts += c->call_attempts;
  sum->blocks += c->blocks;
  sum->busy_lines += c->busy_lines;
  sum->handoffs_in += c->handoffs_in;
  sum->dropped_handoffs += c->dropped_handoffs;
  sum->events += c->events;
}

/* The PEER line that bench/peers/peerline.py parses: `key=value` pairs, the
 * same keys for every engine. wall_s: the engine's run, model init included
 * (process start excluded). calls: attempts that were not busy lines. */
static inline void pcs_peer_line(const char *engine, const char *mode, unsigned threads,
                                 const pcs_params *p, const pcs_counters *c, double wall_s) {
  const uint64_t calls = c->call_attempts - c->busy_lines;
  const double blocking =
      calls ? (double)(c->blocks + c->dropped_handoffs) / (double)calls : 0.0;
  printf("PEER engine=%s mode=%s threads=%u model=pcs size=%ux%u end_time=%.17g seed=%" PRIu64
         " committed_events=%" PRIu64 " wall_s=%.6f call_attempts=%" PRIu64 " blocks=%" PRIu64
         " busy_lines=%" PRIu64 " handoffs=%" PRIu64 " dropped_handoffs=%" PRIu64
         " calls=%" PRIu64 " blocking_probability=%.9f\n",
         engine, mode, threads, p->width, p->height, p->end_time, p->seed, c->events, wall_s,
         c->call_attempts, c->blocks, c->busy_lines, c->handoffs_in, c->dropped_handoffs, calls,
         blocking);
  fflush(stdout);
}

#endif
