/* What the ROSS runners share: the name of the synchronization mode, as the
 * PEER line reports it, and the size of the event pool. */
#ifndef SEER_PEER_ROSS_PEER_H
#define SEER_PEER_ROSS_PEER_H

#include <ross.h>

static inline const char *ross_peer_mode(void) {
  switch (g_tw_synchronization_protocol) {
    case SEQUENTIAL: return "sequential";
    case CONSERVATIVE: return "conservative";
    case OPTIMISTIC: return "optimistic";
    case OPTIMISTIC_DEBUG: return "optimistic-debug";
    case OPTIMISTIC_REALTIME: return "optimistic-realtime";
    default: return "sequential-rollback-check";
  }
}

/* Events per PE: the pending ones, twice, plus room for what optimism keeps
 * until fossil collection. ROSS's default pool (2048) is far too small, and a
 * rank that falls behind (a busy core) makes the other keep more: "Out of
 * events in GVT" aborted PHOLD 1024 runs on 2 ranks beside load with a pool
 * of 2 x 512 pending + 512 events, and none with 64k more (tens of MB a
 * rank). ROSS's --extramem adds to this. */
static inline unsigned ross_peer_event_pool(uint64_t pending) {
  const uint64_t extra = g_tw_synchronization_protocol >= OPTIMISTIC ? 65536 : 2048;
  return (unsigned)(2 * pending + 2 * (uint64_t)g_tw_mblock * g_tw_gvt_interval + extra);
}

#endif
