/* The main of USE's PHOLD runner (see pcs_main.c).
 *
 *   use_phold --threads=2 --end=100 --entities=1024 --seed=0
 *
 * peer.mk builds it with LOOKAHEAD = our PHOLD lookahead (0.1); a smaller
 * --lookahead is refused.
 */
#include "peer_cli.h"
#include "use_peer.h"

phold_params use_phold;
uint64_t *use_phold_events;

int main(int argc, char **argv) {
  use_phold = phold_default_params();
  unsigned threads = 1;
  const peer_opt opts[] = {
      {"entities", PEER_UINT, &use_phold.entities},
      {"population", PEER_UINT, &use_phold.population},
      {"remote", PEER_DOUBLE, &use_phold.remote},
      {"mean", PEER_DOUBLE, &use_phold.mean},
      {"lookahead", PEER_DOUBLE, &use_phold.lookahead},
      {"end", PEER_DOUBLE, &use_phold.end_time},
      {"seed", PEER_U64, &use_phold.seed},
      {"threads", PEER_UINT, &threads},
      {NULL, PEER_UINT, NULL},
  };
  peer_parse(argc, argv, opts);
  if (use_phold.lookahead < LOOKAHEAD || threads < 1 || use_phold.entities < 1) {
    fprintf(stderr, "use_phold: need entities >= 1, threads >= 1 and lookahead >= %g "
                    "(USE's compile-time LOOKAHEAD)\n", (double)LOOKAHEAD);
    return 2;
  }
  use_phold_events = calloc(use_phold.entities, sizeof(*use_phold_events));
  n_cores = threads;
  n_prc_tot = use_phold.entities;
  const double start = peer_seconds();
  start_simulation();
  const double wall = peer_seconds() - start;
  uint64_t total = 0;
  for (uint32_t i = 0; i < use_phold.entities; ++i) total += use_phold_events[i];
  phold_peer_line("use", "optimistic", threads, &use_phold, total, wall);
  return 0;
}
