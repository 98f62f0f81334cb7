// The models that exist only for tests (today: faulty, which breaks the
// event-locality contract on purpose). Not registered by default, so users
// never see them in model_names(): the C++ tests call
// register_test_models(), the Python tests seer_env._core._register_test_models().
#pragma once

namespace seer {

// Registers faulty (factory and declaration). Idempotent and thread-safe.
void register_test_models();

}  // namespace seer
