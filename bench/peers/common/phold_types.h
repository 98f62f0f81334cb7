/* PHOLD's records, defaults and PEER line, without the handlers (phold_model.h). */
#ifndef SEER_PEER_PHOLD_TYPES_H
#define SEER_PEER_PHOLD_TYPES_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "philox.h"

enum { PHOLD_TOKEN = 0, PHOLD_END = 4 };

typedef struct phold_params {
  uint32_t entities, population;
  double remote, mean, lookahead;
  double end_time;
  uint64_t seed;
} phold_params;

/* The defaults of the phold workload (cpp/models/phold/workload.cpp). */
static inline phold_params phold_default_params(void) {
  phold_params p = {1024, 1, 0.25, 1.0, 0.1, 100.0, 0};
  return p;
}

typedef struct phold_entity {
  peer_rng rng;
  uint64_t processed; /* tokens handled before end_time */
  uint32_t done;
  uint32_t pad;
} phold_entity;

/* The PEER line (see pcs_types.h). */
static inline void phold_peer_line(const char *engine, const char *mode, unsigned threads,
                                   const phold_params *p, uint64_t events, double wall_s) {
  printf("PEER engine=%s mode=%s threads=%u model=phold size=%u end_time=%.17g seed=%" PRIu64
         " committed_events=%" PRIu64 " wall_s=%.6f\n",
         engine, mode, threads, p->entities, p->end_time, p->seed, events, wall_s);
  fflush(stdout);
}

#endif
