// Shared by the SerialEventQueue and NodeHeap tests: the reference queue (the
// contract's order: time, then source, then seq), events compared byte for
// byte, and failure messages that say which stream and operation (for
// CHECK, check.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <queue>
#include <vector>

#include "seer/event.hpp"

namespace queue_check {

// A failed check's message: which stream (`shape` >= 0: which stream shape)
// and operation. Formatted into the object itself: it allocates nothing (the
// allocation-failure test checks while allocations are made to fail).
struct At {
  char text[256];
  operator const char*() const { return text; }
};

inline At at(const char* what, std::uint64_t seed, long step, int shape = -1) {
  At message;
  if (shape >= 0) {
    std::snprintf(message.text, sizeof message.text, "%s (shape %d, stream %llu, operation %ld)",
                  what, shape, static_cast<unsigned long long>(seed), step);
  } else {
    std::snprintf(message.text, sizeof message.text, "%s (stream %llu, operation %ld)", what,
                  static_cast<unsigned long long>(seed), step);
  }
  return message;
}

inline At at_operation(const char* what, long step) {
  At message;
  std::snprintf(message.text, sizeof message.text, "%s (operation %ld)", what, step);
  return message;
}

inline bool same_event(const seer::Event& a, const seer::Event& b) {
  return std::memcmp(&a, &b, sizeof(seer::Event)) == 0;
}

using Reference = std::priority_queue<seer::Event, std::vector<seer::Event>, seer::EventAfter>;

}  // namespace queue_check
