// The comparison executors: engines built as others build them, kept to
// measure the parallel executor against (docs/runtime.md, "Executors"). The
// runtime names none of them; they join its executor registry here.
#pragma once

namespace seer {

// Registers "locked" (LockedExecutor) and "barrier" (BarrierExecutor), in
// that order, after the runtime's own executors. Idempotent and thread-safe.
// Called explicitly (by the Python module and the C++ tests): a
// self-registering static object in a static library is dropped by the linker.
void register_comparison_executors();

}  // namespace seer
