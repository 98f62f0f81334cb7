// The phold declaration (see seer/workload.hpp).
#include <cstddef>

#include "phold/phold.hpp"

namespace seer {

WorkloadDecl phold_workload() {
  WorkloadDecl w;
  w.name = "phold";
  w.summary = "PHOLD: tokens hop between entities after exponential delays (no agents).";
  w.params = {
      int_param("num_entities", 1024, 1, 1 << 24, "entities"),
      int_param("population", 1, 1, 1 << 16,
                "tokens per entity at reset (num_entities * population <= 1e8)"),
      real_param("remote", 0.25, 0.0, 1.0, "probability that a hop goes to another entity"),
      capped(real_param("mean", 1.0, 0.0, 1e12, "mean exponential delay beyond the lookahead")),
      capped(positive_param("lookahead", 0.1, 0.0, 1e12, "minimum delay of a hop")),
      capped(positive_param("dt", 1.0, 0.0, 1e12, "step length")),
      int_param("work", 0, 0, 1'000'000'000, "busy-loop iterations per event (compute knob)"),
      real_param("hot_fraction", 0.0, 0.0, 1.0, "fraction of entities that do hot_work"),
      int_param("hot_work", 0, 0, 1'000'000'000, "busy-loop iterations per event of hot entities"),
  };
  w.observation = {"()", "float32", "no agents"};
  w.action = {"()", "int64", "no agents"};
  w.state = {"()", "float32", "none"};
  w.event_kinds = {"TOKEN"};
  std::vector<RecordDecl>& r = w.records;
  r.push_back(checked_record("state", sizeof(PholdState),
                             {SEER_FIELD(PholdState, processed), SEER_FIELD(PholdState, work_acc)},
                             r));
  r.push_back(checked_record("public", sizeof(PholdPublic), {SEER_FIELD(PholdPublic, processed)}, r));
  r.push_back(checked_record("token", sizeof(PholdToken),
                             {SEER_FIELD(PholdToken, origin), SEER_FIELD(PholdToken, hops)}, r));
  return w;
}

}  // namespace seer
