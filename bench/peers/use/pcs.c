/* Our PCS (bench/peers/common/pcs_model.h) on USE: one LP per cell.
 *
 * USE ends a run when every LP's OnGVT, shown a committed state, returns
 * nonzero; each cell schedules PCS_END at --end and OnGVT reports it, copying
 * the committed counters into the LP's result slot as it does. OnGVT returns
 * int: USE's core reads an int, and a bool return leaves the upper bytes of
 * the register undefined (the stock models stop early at -O3). The cell's
 * state, stream included, is malloc'ed memory, which USE checkpoints and
 * restores on rollback; its clock (`now`) is the event's timestamp.
 */
#include <ROOT-Sim.h>

#include "pcs_model.h"
#include "use_peer.h"

static void pcs_send(void *ctx, uint32_t target, double time, int kind, const pcs_phone *phone) {
  (void)ctx;
  ScheduleNewEvent(target, time, (unsigned)kind, (void *)phone, sizeof(*phone));
}

void ProcessEvent(unsigned int me, simtime_t now, unsigned int kind, void *content,
                  unsigned int size, void *state) {
  (void)size;
  pcs_cell *s = (pcs_cell *)state;
  if (kind == INIT) {
    s = (pcs_cell *)malloc(sizeof(*s));
    if (s == NULL) abort();
    memset(s, 0, sizeof(*s));
    SetState(s);
    pcs_on_init(&use_pcs, s, me, NULL);
    pcs_phone none;
    memset(&none, 0, sizeof(none));
    ScheduleNewEvent(me, use_pcs.end_time, PCS_END, &none, sizeof(none));
    return;
  }
  pcs_on_event(&use_pcs, s, me, now, (int)kind, (const pcs_phone *)content, NULL);
}

int OnGVT(unsigned int me, void *snapshot) {
  const pcs_cell *s = (const pcs_cell *)snapshot;
  if (!s->done) return 0;
  use_pcs_totals[me] = s->c;
  return 1;
}
