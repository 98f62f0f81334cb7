/* What a USE runner's main (pcs_main.c, phold_main.c, built as plain objects)
 * shares with its model (pcs.c, phold.c, built inside USE's wrapped-malloc
 * object, whose allocations are LP state): the parameters and one slot of
 * results per LP, both owned by main. */
#ifndef SEER_PEER_USE_PEER_H
#define SEER_PEER_USE_PEER_H

#include "pcs_types.h"
#include "phold_types.h"

extern pcs_params use_pcs;
extern pcs_counters *use_pcs_totals;
extern phold_params use_phold;
extern uint64_t *use_phold_events;

/* USE's engine entry points (core/main.c, core/core.c). */
extern unsigned int n_cores;
extern unsigned int n_prc_tot;
void start_simulation(void);

#endif
