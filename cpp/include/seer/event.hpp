// The event record and its total order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace seer {

using EntityId = std::uint32_t;
using EventKind = std::uint32_t;

// Payloads are fixed-size plain-old-data records copied byte for byte. Models
// keep their payload structs free of implicit padding (add explicit fields),
// so that digests, which hash payload bytes, never see indeterminate bytes.
inline constexpr std::size_t kPayloadBytes = 64;

// An event: "at `time`, entity `target` handles `kind` with `payload`".
// `source` is the entity whose handler scheduled it and `seq` that source's
// running count of scheduled events, so (source, seq) names an event uniquely.
struct Event {
  double time = 0.0;
  EntityId target = 0;
  EntityId source = 0;
  std::uint64_t seq = 0;
  EventKind kind = 0;
  std::uint32_t reserved = 0;  // keeps the record free of padding; always 0
  alignas(8) unsigned char payload[kPayloadBytes] = {};

  template <class P>
  const P& as() const {
    static_assert(std::is_trivially_copyable_v<P>, "payloads must be trivially copyable");
    static_assert(sizeof(P) <= kPayloadBytes, "payload larger than kPayloadBytes");
    static_assert(alignof(P) <= 8, "payload alignment above 8");
    return *reinterpret_cast<const P*>(payload);
  }

  template <class P>
  void set_payload(const P& p) {
    static_assert(std::is_trivially_copyable_v<P>, "payloads must be trivially copyable");
    static_assert(sizeof(P) <= kPayloadBytes, "payload larger than kPayloadBytes");
    std::memcpy(payload, &p, sizeof(P));
  }
};
static_assert(sizeof(Event) == 32 + kPayloadBytes, "Event must have no padding");
static_assert(std::is_trivially_copyable_v<Event>);

// The serial order of the contract: (time, source, seq). Unique per event, so
// the order is total and any two executors agree on it.
inline bool key_less(const Event& a, const Event& b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.source != b.source) return a.source < b.source;
  return a.seq < b.seq;
}

// Comparator for std heaps (which are max-heaps): "a comes after b".
struct EventAfter {
  bool operator()(const Event& a, const Event& b) const { return key_less(b, a); }
};

}  // namespace seer
