// The models that ship with seer_env. The runtime names none of them: the
// Python module and the C++ tests call register_builtin_models() once.
#pragma once

namespace seer {

// Registers phold, pcs, pcs_v1, aircraft and aircraft_v1 (factory and
// declaration). Idempotent and thread-safe.
void register_builtin_models();

}  // namespace seer
