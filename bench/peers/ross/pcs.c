/* Our PCS (bench/peers/common/pcs_model.h) on ROSS: one LP per cell.
 *
 *   mpirun -np 1 ross_pcs --synch=1 --end=600 --width=32 --height=32 --seed=0
 *   mpirun -np 2 ross_pcs --synch=3 --end=600 --width=64 --height=64
 *
 * --synch: ROSS's own (1 sequential, 3 optimistic). ROSS's conservative mode
 * (2) requires *every* event, self-events included, to lie at least
 * g_tw_lookahead ahead, and PCS schedules a call's end, its next move and a
 * blocked phone's next call at any offset: the runner refuses it.
 * Reverse computation: the handler saves the cell's state in the message
 * (optimistic modes only) and the reverse handler restores it; the stream is
 * part of that state. The handler's clock is the event's exact time, carried
 * in the message: ROSS stores now + (time - now), which may round.
 */
#include <ross.h>

#include "pcs_model.h"
#include "ross_peer.h"

typedef struct ross_pcs_msg {
  double time;
  int32_t kind;
  int32_t pad;
  pcs_phone phone;
  pcs_cell saved; /* the cell before this event (optimistic modes) */
} ross_pcs_msg;

static pcs_params P;
static pcs_counters rank_totals; /* this rank's cells, summed in the final callback */

static void pcs_send(void *ctx, uint32_t target, double time, int kind, const pcs_phone *phone) {
  tw_lp *lp = (tw_lp *)ctx;
  tw_event *e = tw_event_new(target, time - tw_now(lp), lp);
  ross_pcs_msg *m = (ross_pcs_msg *)tw_event_data(e);
  m->time = time;
  m->kind = kind;
  m->phone = *phone;
  tw_event_send(e); /* at or past --end: ROSS's abort event, dropped */
}

static void cell_init(pcs_cell *s, tw_lp *lp) {
  memset(s, 0, sizeof(*s));
  pcs_on_init(&P, s, (uint32_t)lp->gid, lp);
}

static void cell_event(pcs_cell *s, tw_bf *bf, ross_pcs_msg *m, tw_lp *lp) {
  (void)bf;
  if (g_tw_synchronization_protocol >= OPTIMISTIC) m->saved = *s;
  pcs_on_event(&P, s, (uint32_t)lp->gid, m->time, m->kind, &m->phone, lp);
}

static void cell_event_reverse(pcs_cell *s, tw_bf *bf, ross_pcs_msg *m, tw_lp *lp) {
  (void)bf, (void)lp;
  *s = m->saved;
}

static void cell_final(pcs_cell *s, tw_lp *lp) {
  (void)lp;
  pcs_add_counters(&rank_totals, &s->c);
}

static tw_peid cell_map(tw_lpid gid) { return (tw_peid)(gid / g_tw_nlp); }


static tw_lptype cell_type[] = {
    {(init_f)cell_init, (pre_run_f)NULL, (event_f)cell_event, (revent_f)cell_event_reverse,
     (commit_f)NULL, (final_f)cell_final, (map_f)cell_map, sizeof(pcs_cell)},
    {0},
};

static unsigned opt_width, opt_height, opt_channels, opt_phones;
static unsigned long long opt_seed;

static const tw_optdef pcs_options[] = {
    TWOPT_GROUP("seer_env PCS (pcs_v0, no guard channels)"),
    TWOPT_UINT("width", opt_width, "cells along x (a torus)"),
    TWOPT_UINT("height", opt_height, "cells along y (a torus)"),
    TWOPT_UINT("channels", opt_channels, "channels per cell"),
    TWOPT_UINT("phones", opt_phones, "phones per cell at time 0"),
    TWOPT_DOUBLE("call-interval", P.call_interval, "mean minutes between call attempts"),
    TWOPT_DOUBLE("call-duration", P.call_duration, "mean minutes of a call"),
    TWOPT_DOUBLE("move-interval", P.move_interval, "mean minutes between moves"),
    TWOPT_DOUBLE("handoff-delay", P.handoff_delay, "minutes a handoff takes (the lookahead)"),
    TWOPT_ULONGLONG("seed", opt_seed, "seed of the cells' streams"),
    TWOPT_END(),
};

int main(int argc, char **argv) {
  P = pcs_default_params();
  opt_width = P.width, opt_height = P.height, opt_channels = P.channels;
  opt_phones = P.phones_per_cell;
  opt_seed = 0;
  tw_opt_add(pcs_options);
  tw_init(&argc, &argv);
  P.width = opt_width, P.height = opt_height, P.channels = opt_channels;
  P.phones_per_cell = opt_phones, P.seed = opt_seed;
  P.end_time = g_tw_ts_end;

  const unsigned ranks = tw_nnodes();
  const uint64_t cells = (uint64_t)P.width * P.height;
  if (g_tw_synchronization_protocol == CONSERVATIVE) {
    if (tw_ismaster())
      fprintf(stderr, "ross_pcs: ROSS's conservative mode needs every event >= g_tw_lookahead "
                      "ahead, self-events included; PCS has self-events at any offset\n");
    tw_end();
    return 3;
  }
  if (P.channels < 1 || P.channels > 64 || cells % ranks != 0) {
    if (tw_ismaster())
      fprintf(stderr, "ross_pcs: need 1 <= channels <= 64 and cells divisible by ranks\n");
    tw_end();
    return 2;
  }
  const tw_lpid nlp = (tw_lpid)(cells / ranks);
  g_tw_events_per_pe = ross_peer_event_pool((uint64_t)(nlp * P.phones_per_cell));
  tw_define_lps(nlp, sizeof(ross_pcs_msg));
  for (tw_lpid i = 0; i < g_tw_nlp; ++i) tw_lp_settype(i, &cell_type[0]);

  MPI_Barrier(MPI_COMM_ROSS);
  const double start = MPI_Wtime();
  tw_run();
  MPI_Barrier(MPI_COMM_ROSS);
  const double wall = MPI_Wtime() - start;

  pcs_counters total;
  MPI_Reduce(&rank_totals, &total, sizeof(total) / sizeof(uint64_t), MPI_UINT64_T, MPI_SUM, 0,
             MPI_COMM_ROSS);
  if (tw_ismaster()) pcs_peer_line("ross", ross_peer_mode(), ranks, &P, &total, wall);
  tw_end();
  return 0;
}
