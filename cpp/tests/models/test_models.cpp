// The one place that lists the test-only models (registered explicitly, as
// the built-in ones are).
#include "test_models.hpp"

#include <mutex>

#include "faulty/faulty.hpp"
#include "model_registry.hpp"
#include "slots/slots.hpp"
#include "traffic/traffic_grid.hpp"

namespace seer {

void register_test_models() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_model("faulty", faulty_workload(), make_faulty);  // deliberate contract breaches
    // The NumbaModel speed comparison's third model (tests/support/traffic_grid_numba.py).
    register_model("traffic_grid", traffic_grid_workload(), make_traffic_grid);
    // Action masks: agents whose valid actions vary (lockstep and decisions).
    register_model("slots", slots_workload(), make_slots);
    register_model("slots_asking", slots_asking_workload(), make_slots_asking);
  });
}

}  // namespace seer
