/* Our PHOLD (bench/peers/common/phold_model.h) on ROSS: one LP per entity.
 *
 *   mpirun -np 1 ross_phold --synch=1 --end=100 --entities=1024 --seed=0
 *   mpirun -np 2 ross_phold --synch=2 --end=100 --entities=1024
 *
 * --synch: 1 sequential, 2 conservative, 3 optimistic. Every hop is at least
 * --lookahead ahead, so the conservative mode applies; its g_tw_lookahead is
 * set a hair below ours (ROSS checks (now + d) - now >= lookahead, which
 * rounding can break by an ulp). Reverse computation by state saving in the
 * message, as in pcs.c; the handler's clock is the time carried in the message.
 */
#include <ross.h>

#include "phold_model.h"
#include "ross_peer.h"

typedef struct ross_phold_msg {
  double time;
  int32_t kind;
  int32_t pad;
  phold_entity saved;
} ross_phold_msg;

static phold_params P;
static uint64_t rank_events;

static void phold_send(void *ctx, uint32_t target, double time, int kind) {
  tw_lp *lp = (tw_lp *)ctx;
  tw_event *e = tw_event_new(target, time - tw_now(lp), lp);
  ross_phold_msg *m = (ross_phold_msg *)tw_event_data(e);
  m->time = time;
  m->kind = kind;
  tw_event_send(e);
}

static void entity_init(phold_entity *s, tw_lp *lp) {
  memset(s, 0, sizeof(*s));
  phold_on_init(&P, s, (uint32_t)lp->gid, lp);
}

static void entity_event(phold_entity *s, tw_bf *bf, ross_phold_msg *m, tw_lp *lp) {
  (void)bf;
  if (g_tw_synchronization_protocol >= OPTIMISTIC) m->saved = *s;
  phold_on_event(&P, s, (uint32_t)lp->gid, m->time, m->kind, lp);
}

static void entity_event_reverse(phold_entity *s, tw_bf *bf, ross_phold_msg *m, tw_lp *lp) {
  (void)bf, (void)lp;
  *s = m->saved;
}

static void entity_final(phold_entity *s, tw_lp *lp) {
  (void)lp;
  rank_events += s->processed;
}

static tw_peid entity_map(tw_lpid gid) { return (tw_peid)(gid / g_tw_nlp); }

static tw_lptype entity_type[] = {
    {(init_f)entity_init, (pre_run_f)NULL, (event_f)entity_event, (revent_f)entity_event_reverse,
     (commit_f)NULL, (final_f)entity_final, (map_f)entity_map, sizeof(phold_entity)},
    {0},
};

static unsigned opt_entities, opt_population;
static unsigned long long opt_seed;

static const tw_optdef phold_options[] = {
    TWOPT_GROUP("seer_env PHOLD (work 0)"),
    TWOPT_UINT("entities", opt_entities, "entities"),
    TWOPT_UINT("population", opt_population, "tokens per entity at time 0"),
    TWOPT_DOUBLE("remote", P.remote, "probability that a hop goes to another entity"),
    TWOPT_DOUBLE("mean", P.mean, "mean exponential delay beyond the lookahead"),
    TWOPT_DOUBLE("lookahead", P.lookahead, "minimum delay of a hop"),
    TWOPT_ULONGLONG("seed", opt_seed, "seed of the entities' streams"),
    TWOPT_END(),
};

int main(int argc, char **argv) {
  P = phold_default_params();
  opt_entities = P.entities, opt_population = P.population;
  opt_seed = 0;
  tw_opt_add(phold_options);
  tw_init(&argc, &argv);
  P.entities = opt_entities, P.population = opt_population, P.seed = opt_seed;
  P.end_time = g_tw_ts_end;

  const unsigned ranks = tw_nnodes();
  if (P.entities % ranks != 0) {
    if (tw_ismaster()) fprintf(stderr, "ross_phold: entities must be divisible by ranks\n");
    tw_end();
    return 2;
  }
  const tw_lpid nlp = P.entities / ranks;
  g_tw_lookahead = P.lookahead * (1.0 - 1e-9);
  g_tw_events_per_pe = ross_peer_event_pool((uint64_t)(nlp * P.population));
  tw_define_lps(nlp, sizeof(ross_phold_msg));
  for (tw_lpid i = 0; i < g_tw_nlp; ++i) tw_lp_settype(i, &entity_type[0]);

  MPI_Barrier(MPI_COMM_ROSS);
  const double start = MPI_Wtime();
  tw_run();
  MPI_Barrier(MPI_COMM_ROSS);
  const double wall = MPI_Wtime() - start;

  uint64_t total = 0;
  MPI_Reduce(&rank_events, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_ROSS);
  if (tw_ismaster()) phold_peer_line("ross", ross_peer_mode(), ranks, &P, total, wall);
  tw_end();
  return 0;
}
