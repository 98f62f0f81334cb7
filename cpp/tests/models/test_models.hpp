// The models that exist only for tests: faulty, which breaks the
// event-locality contract on purpose, and traffic_grid, the C++ twin of a
// NumbaModel for the speed comparison; slots, whose agents' valid
// actions vary (action masks). Not registered by default, so users
// never see them in model_names(): the C++ tests call
// register_test_models(), the Python tests seer_env._core._register_test_models().
#pragma once

namespace seer {

// Registers faulty, traffic_grid, slots and slots_asking (factories and declarations). Idempotent and thread-safe.
void register_test_models();

}  // namespace seer
