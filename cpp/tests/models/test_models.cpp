// The one place that lists the test-only models (registered explicitly, as
// the built-in ones are).
#include "test_models.hpp"

#include <mutex>

#include "faulty/faulty.hpp"
#include "model_registry.hpp"

namespace seer {

void register_test_models() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_model("faulty", faulty_workload(), make_faulty);  // deliberate contract breaches
  });
}

}  // namespace seer
