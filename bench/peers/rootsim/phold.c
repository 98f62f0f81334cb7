/* Our PHOLD (bench/peers/common/phold_model.h) on ROOT-Sim 3.0: one LP per entity.
 *
 *   rootsim_phold --serial=1 --end=100 --entities=1024 --seed=0
 *   rootsim_phold --threads=2 --end=100 --entities=16384
 *
 * The run ends on ROOT-Sim's own termination time, --end, as in pcs.c.
 */
#include <ROOT-Sim.h>

#include "peer_cli.h"
#include "phold_model.h"

static phold_params P;
static uint64_t *entity_events; /* written at LP_FINI, one slot per entity */

static void phold_send(void *ctx, uint32_t target, double time, int kind) {
  (void)ctx;
  const uint64_t token = 0;
  ScheduleNewEvent(target, time, (unsigned)kind, &token, sizeof(token));
}

static void ProcessEvent(lp_id_t me, simtime_t now, unsigned kind, const void *content,
                         unsigned size, void *state) {
  (void)size, (void)content;
  phold_entity *s = (phold_entity *)state;
  switch (kind) {
    case LP_INIT: {
      s = (phold_entity *)rs_malloc(sizeof(*s));
      if (s == NULL) abort();
      memset(s, 0, sizeof(*s));
      SetState(s);
      phold_on_init(&P, s, (uint32_t)me, NULL);
      return;
    }
    case LP_FINI:
      entity_events[me] = s->processed;
      return;
    default:
      phold_on_event(&P, s, (uint32_t)me, now, (int)kind, NULL);
  }
}

static bool CanEnd(lp_id_t me, const void *snapshot) {
  (void)me, (void)snapshot;
  return false; /* the termination time ends the run */
}

int main(int argc, char **argv) {
  P = phold_default_params();
  unsigned threads = 1, serial = 0, gvt_period_us = 1000;
  const peer_opt opts[] = {
      {"entities", PEER_UINT, &P.entities},
      {"population", PEER_UINT, &P.population},
      {"remote", PEER_DOUBLE, &P.remote},
      {"mean", PEER_DOUBLE, &P.mean},
      {"lookahead", PEER_DOUBLE, &P.lookahead},
      {"end", PEER_DOUBLE, &P.end_time},
      {"seed", PEER_U64, &P.seed},
      {"threads", PEER_UINT, &threads},
      {"serial", PEER_UINT, &serial},
      {"gvt-period-us", PEER_UINT, &gvt_period_us},
      {NULL, PEER_UINT, NULL},
  };
  peer_parse(argc, argv, opts);
  if (P.entities < 1 || P.end_time <= 0.0) {
    fprintf(stderr, "rootsim_phold: need entities >= 1 and end > 0\n");
    return 2;
  }
  entity_events = calloc(P.entities, sizeof(*entity_events));
  struct simulation_configuration conf = {
      .lps = P.entities,
      .n_threads = serial ? 1 : threads,
      .termination_time = P.end_time,
      .gvt_period = gvt_period_us,
      .log_level = LOG_SILENT, /* no "Virtual time" line at every GVT */
      .stats_file = NULL,
      .ckpt_interval = 0,  /* ROOT-Sim's automatic checkpoint interval */
      .core_binding = true,
      .serial = serial != 0,
      .dispatcher = ProcessEvent,
      .committed = CanEnd,
  };
  if (RootsimInit(&conf) != 0) return 2;
  const double start = peer_seconds();
  const int ret = RootsimRun();
  const double wall = peer_seconds() - start;
  if (ret != 0) return 1;
  uint64_t total = 0;
  for (uint32_t i = 0; i < P.entities; ++i) total += entity_events[i];
  phold_peer_line("rootsim", serial ? "serial" : "optimistic", serial ? 1 : threads, &P, total, wall);
  return 0;
}
