// Refusing configurations that cannot fit in memory, before allocating them.
//
// A model fills `ModelSpec::memory` (entities, bytes per entity, pending
// events) from its config and calls require_memory() before it allocates
// anything: an absurd config becomes a ValueError with the estimate instead of
// an out-of-memory kill minutes later.
#pragma once

#include <cstdint>
#include <string>

namespace seer {

struct ModelSpec;

// What one instance of a model needs, roughly.
struct MemoryEstimate {
  std::uint64_t entities = 0;
  std::uint64_t bytes_per_entity = 0;  // model state + snapshot + runtime bookkeeping
  std::uint64_t pending_events = 0;    // events pending at once, typically
  std::uint64_t extra_bytes = 0;       // outputs and model-wide tables
  // Total bytes (saturating: never wraps).
  std::uint64_t bytes() const;
};

// Runtime bytes per entity beyond the model's records: random stream and
// sequence counter, local queue, executive-list slot, heap slack.
inline constexpr std::uint64_t kRuntimeBytesPerEntity = 160;
// Bytes per pending event, the larger layout: a parallel executor's node (two
// cache lines) and its heap key; the serial queue's slab slot and key take less.
inline constexpr std::uint64_t kBytesPerEvent = 152;

// Bytes this process may still allocate: MemAvailable from /proc/meminfo,
// capped by a cgroup v2 memory.max limit (without those files, and on other
// systems: the physical memory the system reports); the environment variable
// SEER_MEMORY_LIMIT overrides both (tests, batch schedulers): a byte count
// with an optional binary unit ("8589934592", "8G", "512MiB") or "max" (no
// limit); any other value throws std::invalid_argument (-> ValueError)
// naming the variable. Returns UINT64_MAX when nothing is known.
// Thread-safe; reads files.
std::uint64_t available_memory();

// Bytes one instance needs: spec.memory plus the boundary outputs
// (observations, rewards, flags, infos), counted twice for the Python copies.
std::uint64_t instance_bytes(const ModelSpec& spec);

// Throws std::invalid_argument (-> ValueError) when `copies` instances of the
// model would need more than available_memory(), with the estimate. `knobs`
// names the config values that drive the size, e.g. "width=4096, height=4096".
void require_memory(const ModelSpec& spec, const std::string& knobs, std::uint64_t copies = 1);

// The memory guard's bound on the events pending at once in a step of one of
// `copies` instances: as many events (kBytesPerEvent each) as fill half of
// available_memory() (the other half is headroom: the layouts grow by
// doubling, a checked step keeps a copy), shared among the copies, and never
// below twice the model's own estimate (spec.memory.pending_events). A
// cascade past it is EventBudgetExceeded, not an out-of-memory kill.
std::uint64_t pending_event_limit(const ModelSpec& spec, std::uint64_t copies = 1);

// "1.5 GB", "320 MB", ... for messages.
std::string format_bytes(std::uint64_t bytes);

}  // namespace seer
