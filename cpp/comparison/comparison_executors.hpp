// The comparison executors: engines built as others build them, kept to
// measure the parallel executor against (docs/runtime.md, "Executors"). The
// runtime names none of them; they join its executor registry here.
#pragma once

namespace seer {

// Registers "locked" (LockedExecutor) and "barrier" (BarrierExecutor), in
// that order, after the runtime's own executors. Idempotent and thread-safe.
// Called explicitly (by the C++ tests and benchmark drivers, and through
// seer_env._core._register_comparison_executors() by the Python bench and
// tests): users' executor_names() lists only the runtime's own. (A
// self-registering static object in a static library is dropped by the linker.)
void register_comparison_executors();

}  // namespace seer
