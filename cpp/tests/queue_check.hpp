// Shared by the SerialEventQueue and NodeHeap tests: the reference queue (the
// contract's order: time, then source, then seq), events compared byte for
// byte, and failure reports that say which stream and operation.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <vector>

#include "seer/event.hpp"

namespace queue_check {

inline int failures = 0;

// Counts and reports a failed check (`shape` >= 0: which stream shape); a
// run with more than 20 failures stops.
inline void expect(bool ok, const char* what, std::uint64_t seed, long step, int shape = -1) {
  if (ok) return;
  if (shape >= 0) {
    std::fprintf(stderr, "FAIL: %s (shape %d, stream %llu, operation %ld)\n", what, shape,
                 static_cast<unsigned long long>(seed), step);
  } else {
    std::fprintf(stderr, "FAIL: %s (stream %llu, operation %ld)\n", what,
                 static_cast<unsigned long long>(seed), step);
  }
  if (++failures > 20) std::exit(1);
}

inline bool same_event(const seer::Event& a, const seer::Event& b) {
  return std::memcmp(&a, &b, sizeof(seer::Event)) == 0;
}

using Reference = std::priority_queue<seer::Event, std::vector<seer::Event>, seer::EventAfter>;

}  // namespace queue_check
