// The one place that lists the built-in models (registered explicitly:
// static initializers in a static library are dropped by the linker).
#include "builtin_models.hpp"

#include <mutex>

#include "aircraft/aircraft.hpp"
#include "model_registry.hpp"
#include "pcs/pcs.hpp"
#include "phold/phold.hpp"

namespace seer {

void register_builtin_models() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_model("phold", phold_workload(), make_phold);
    register_model("pcs", pcs_workload(), make_pcs);
    register_model("pcs_v1", pcs_v1_workload(), make_pcs_v1);
    register_model("pcs_admission", pcs_admission_workload(), make_pcs_admission);
    register_model("aircraft", aircraft::aircraft_workload(), aircraft::make_aircraft);
    register_model("aircraft_v1", aircraft::aircraft_v1_workload(), aircraft::make_aircraft_v1);
  });
}

}  // namespace seer
