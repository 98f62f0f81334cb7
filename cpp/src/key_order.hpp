// Puts pointers to events in key order (time, source, seq: key_less), for
// saves and digests of a whole pending set.
//
// A comparison sort of 262k events (PCS 128x128) took ~30 ms, most of a
// snapshot's time, in mispredicted branches. Event times are finite and
// >= 0, so their IEEE bit patterns order like the times: a stable LSD radix
// sort on those bits (a byte a pass, passes whose byte is the same for
// every event skipped) orders them in a few linear passes, and the rare
// runs of equal times are then ordered by (source, seq).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "seer/event.hpp"

namespace seer {

inline void sort_by_key(std::vector<const Event*>& events) {
  struct Item {
    std::uint64_t bits;
    const Event* event;
  };
  const std::size_t n = events.size();
  std::vector<Item> items(n), scratch(n);
  for (std::size_t i = 0; i < n; ++i) {
    double t = events[i]->time;
    if (t == 0.0) t = 0.0;  // -0.0 equals 0.0 in key_less; its sign bit would not
    std::uint64_t bits;
    std::memcpy(&bits, &t, sizeof(bits));
    items[i] = Item{bits, events[i]};
  }
  // Non-negative doubles only (the runtime refuses others): a negative one
  // would sort after every positive. Checked by the callers' validation.
  for (unsigned shift = 0; shift < 64; shift += 8) {
    std::array<std::size_t, 257> start{};
    for (const Item& it : items) ++start[((it.bits >> shift) & 0xFF) + 1];
    if (std::any_of(start.begin() + 1, start.end(), [n](std::size_t c) { return c == n; })) {
      continue;  // every event has the same byte here: the pass would change nothing
    }
    for (std::size_t d = 1; d < start.size(); ++d) start[d] += start[d - 1];
    for (const Item& it : items) scratch[start[(it.bits >> shift) & 0xFF]++] = it;
    items.swap(scratch);
  }
  // Equal times: order by (source, seq).
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && items[j].bits == items[i].bits) ++j;
    if (j - i > 1) {
      std::sort(items.begin() + static_cast<std::ptrdiff_t>(i),
                items.begin() + static_cast<std::ptrdiff_t>(j),
                [](const Item& a, const Item& b) { return key_less(*a.event, *b.event); });
    }
    i = j;
  }
  for (std::size_t i = 0; i < n; ++i) events[i] = items[i].event;
}

}  // namespace seer
