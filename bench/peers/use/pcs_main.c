/* The main of USE's PCS runner, in place of USE's own (core/main.c, whose
 * main is renamed when the runner links): it parses our options, runs USE's
 * start_simulation and prints the PEER line.
 *
 *   use_pcs --threads=2 --end=600 --width=64 --height=64 --seed=0
 *
 * LOOKAHEAD is USE's compile-time lookahead (peer.mk builds the PCS runner
 * with LOOKAHEAD = the handoff delay), so a smaller --handoff-delay is refused.
 */
#include "peer_cli.h"
#include "use_peer.h"

pcs_params use_pcs;
pcs_counters *use_pcs_totals;

int main(int argc, char **argv) {
  use_pcs = pcs_default_params();
  unsigned threads = 1;
  const peer_opt opts[] = {
      {"width", PEER_UINT, &use_pcs.width},
      {"height", PEER_UINT, &use_pcs.height},
      {"channels", PEER_UINT, &use_pcs.channels},
      {"phones", PEER_UINT, &use_pcs.phones_per_cell},
      {"call-interval", PEER_DOUBLE, &use_pcs.call_interval},
      {"call-duration", PEER_DOUBLE, &use_pcs.call_duration},
      {"move-interval", PEER_DOUBLE, &use_pcs.move_interval},
      {"handoff-delay", PEER_DOUBLE, &use_pcs.handoff_delay},
      {"end", PEER_DOUBLE, &use_pcs.end_time},
      {"seed", PEER_U64, &use_pcs.seed},
      {"threads", PEER_UINT, &threads},
      {NULL, PEER_UINT, NULL},
  };
  peer_parse(argc, argv, opts);
  if (use_pcs.channels < 1 || use_pcs.channels > 64 || use_pcs.handoff_delay < LOOKAHEAD ||
      threads < 1) {
    fprintf(stderr, "use_pcs: need 1 <= channels <= 64, threads >= 1 and handoff-delay >= %g "
                    "(USE's compile-time LOOKAHEAD)\n", (double)LOOKAHEAD);
    return 2;
  }
  const uint64_t cells = (uint64_t)use_pcs.width * use_pcs.height;
  use_pcs_totals = calloc(cells, sizeof(*use_pcs_totals));
  n_cores = threads;
  n_prc_tot = (unsigned)cells;
  const double start = peer_seconds();
  start_simulation();
  const double wall = peer_seconds() - start;
  pcs_counters total = {0};
  for (uint64_t i = 0; i < cells; ++i) pcs_add_counters(&total, &use_pcs_totals[i]);
  pcs_peer_line("use", "optimistic", threads, &use_pcs, &total, wall);
  return 0;
}
