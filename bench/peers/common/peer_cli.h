/* What every peer runner shares: its options, its clock and its PEER line.
 *
 * Options are `--name=value` (ROSS's style, so that one command shape serves
 * all engines); ROSS parses its own through tw_opt_add, the other runners
 * through peer_parse below. The PEER line itself is printed by each model
 * header (pcs_peer_line, phold_peer_line).
 */
#ifndef SEER_PEER_CLI_H
#define SEER_PEER_CLI_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


typedef enum { PEER_UINT, PEER_U64, PEER_DOUBLE, PEER_STRING } peer_opt_type;

typedef struct peer_opt {
  const char *name;
  peer_opt_type type;
  void *value;
} peer_opt;

/* Parses argv[1..] as --name=value into opts (terminated by a NULL name).
 * An unknown option or a bad number exits 2 with a message. */
static inline void peer_parse(int argc, char **argv, const peer_opt *opts) {
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *eq = strchr(arg, '=');
    const peer_opt *o = NULL;
    if (strncmp(arg, "--", 2) == 0 && eq != NULL) {
      for (const peer_opt *k = opts; k->name != NULL; ++k) {
        if (strlen(k->name) == (size_t)(eq - arg - 2) && strncmp(arg + 2, k->name, eq - arg - 2) == 0) {
          o = k;
        }
      }
    }
    if (o == NULL) {
      fprintf(stderr, "%s: unknown option %s; options:", argv[0], arg);
      for (const peer_opt *k = opts; k->name != NULL; ++k) fprintf(stderr, " --%s=", k->name);
      fprintf(stderr, "\n");
      exit(2);
    }
    char *end = NULL;
    const char *text = eq + 1;
    switch (o->type) {
      case PEER_UINT: *(unsigned *)o->value = (unsigned)strtoul(text, &end, 10); break;
      case PEER_U64: *(uint64_t *)o->value = (uint64_t)strtoull(text, &end, 10); break;
      case PEER_DOUBLE: *(double *)o->value = strtod(text, &end); break;
      case PEER_STRING: *(const char **)o->value = text, end = (char *)text + strlen(text); break;
    }
    if (end == text || *end != '\0') {
      fprintf(stderr, "%s: bad value in %s\n", argv[0], arg);
      exit(2);
    }
  }
}

static inline double peer_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
