/* Our PCS (bench/peers/common/pcs_model.h) on ROOT-Sim 3.0: one LP per cell.
 *
 *   rootsim_pcs --serial=1 --end=600 --width=32 --height=32 --seed=0
 *   rootsim_pcs --threads=2 --end=600 --width=64 --height=64
 *
 * The run ends on ROOT-Sim's own termination time, --end: the parallel engine
 * stops once its GVT passes it, the serial one at the first check (once per
 * GVT period, 1 ms) past it. Either handles some events after --end, which
 * pcs_model.h does not count, so the counters read at LP_FINI are those of
 * the committed events before --end. ROOT-Sim 3.0.0's parallel engine can
 * deadlock as it ends (in gvt_msg_drain, one thread at a barrier, the other
 * in a GVT round), a few 2-thread runs in a hundred beside load, whether the
 * run ends on the termination time or on CanEnd: bench/peers/harness.py
 * starts a hung run again. The state (cell, stream included) lives in
 * rs_malloc memory, which ROOT-Sim checkpoints and restores on rollback.
 */
#include <ROOT-Sim.h>

#include "peer_cli.h"
#include "pcs_model.h"

static pcs_params P;
static pcs_counters *cell_totals; /* written at LP_FINI, one slot per cell */

static void pcs_send(void *ctx, uint32_t target, double time, int kind, const pcs_phone *phone) {
  (void)ctx;
  ScheduleNewEvent(target, time, (unsigned)kind, phone, sizeof(*phone));
}

static void ProcessEvent(lp_id_t me, simtime_t now, unsigned kind, const void *content,
                         unsigned size, void *state) {
  (void)size;
  pcs_cell *s = (pcs_cell *)state;
  switch (kind) {
    case LP_INIT: {
      s = (pcs_cell *)rs_malloc(sizeof(*s));
      if (s == NULL) abort();
      memset(s, 0, sizeof(*s));
      SetState(s);
      pcs_on_init(&P, s, (uint32_t)me, NULL);
      return;
    }
    case LP_FINI:
      cell_totals[me] = s->c;
      return;
    default:
      pcs_on_event(&P, s, (uint32_t)me, now, (int)kind, (const pcs_phone *)content, NULL);
  }
}

static bool CanEnd(lp_id_t me, const void *snapshot) {
  (void)me, (void)snapshot;
  return false; /* the termination time ends the run */
}

int main(int argc, char **argv) {
  P = pcs_default_params();
  unsigned threads = 1, serial = 0, gvt_period_us = 1000;
  const peer_opt opts[] = {
      {"width", PEER_UINT, &P.width},
      {"height", PEER_UINT, &P.height},
      {"channels", PEER_UINT, &P.channels},
      {"phones", PEER_UINT, &P.phones_per_cell},
      {"call-interval", PEER_DOUBLE, &P.call_interval},
      {"call-duration", PEER_DOUBLE, &P.call_duration},
      {"move-interval", PEER_DOUBLE, &P.move_interval},
      {"handoff-delay", PEER_DOUBLE, &P.handoff_delay},
      {"end", PEER_DOUBLE, &P.end_time},
      {"seed", PEER_U64, &P.seed},
      {"threads", PEER_UINT, &threads},
      {"serial", PEER_UINT, &serial},
      {"gvt-period-us", PEER_UINT, &gvt_period_us},
      {NULL, PEER_UINT, NULL},
  };
  peer_parse(argc, argv, opts);
  if (P.channels < 1 || P.channels > 64 || P.end_time <= 0.0) {
    fprintf(stderr, "rootsim_pcs: need 1 <= channels <= 64 and end > 0\n");
    return 2;
  }
  const uint64_t cells = (uint64_t)P.width * P.height;
  cell_totals = calloc(cells, sizeof(*cell_totals));
  struct simulation_configuration conf = {
      .lps = cells,
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
  pcs_counters total = {0};
  for (uint64_t i = 0; i < cells; ++i) pcs_add_counters(&total, &cell_totals[i]);
  pcs_peer_line("rootsim", serial ? "serial" : "optimistic", serial ? 1 : threads, &P, &total, wall);
  return 0;
}
