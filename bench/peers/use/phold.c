/* Our PHOLD (bench/peers/common/phold_model.h) on USE: one LP per entity.
 * Termination and results as in pcs.c (PHOLD_END at --end, OnGVT returns int). */
#include <ROOT-Sim.h>

#include "phold_model.h"
#include "use_peer.h"

static void phold_send(void *ctx, uint32_t target, double time, int kind) {
  (void)ctx;
  uint64_t token = 0;
  ScheduleNewEvent(target, time, (unsigned)kind, &token, sizeof(token));
}

void ProcessEvent(unsigned int me, simtime_t now, unsigned int kind, void *content,
                  unsigned int size, void *state) {
  (void)size, (void)content;
  phold_entity *s = (phold_entity *)state;
  if (kind == INIT) {
    s = (phold_entity *)malloc(sizeof(*s));
    if (s == NULL) abort();
    memset(s, 0, sizeof(*s));
    SetState(s);
    phold_on_init(&use_phold, s, me, NULL);
    phold_send(NULL, me, use_phold.end_time, PHOLD_END);
    return;
  }
  phold_on_event(&use_phold, s, me, now, (int)kind, NULL);
}

int OnGVT(unsigned int me, void *snapshot) {
  const phold_entity *s = (const phold_entity *)snapshot;
  if (!s->done) return 0;
  use_phold_events[me] = s->processed;
  return 1;
}
