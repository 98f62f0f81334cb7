"""Built-in environments, PettingZoo style: one env class per workload, one row per version.

``VERSIONS`` below holds every version, one row each (an
``seer_env.envs.version.EnvVersion`` once used): its name, the workload's env
class (``pcs.PcsEnv``, ``aircraft.AircraftEnv``), the declaration it takes its
parameters from, its defaults and what it changed.
Each version's module (``pcs_v0``, ``pcs_v1``, ``aircraft_v0``,
``aircraft_v1``) re-exports its functions, and its ``__doc__`` is generated
from its row: ``from seer_env.envs import pcs_v0; env = pcs_v0.parallel_env()``.
"""

from seer_env.envs.aircraft import AircraftEnv
from seer_env.envs.pcs import PcsAdmissionEnv, PcsEnv
from seer_env.envs.version import VersionTable

__all__ = ["VERSIONS"]

# fmt: off
VERSIONS = VersionTable(
    # name, env class, declaration (cpp/models/<workload>/workload.cpp), the defaults that
    # differ from the declaration's or the runtime options', its line of version history
    ("pcs_v0", PcsEnv, "pcs", {"max_cycles": 1000}, "initial release."),
    ("pcs_v1", PcsEnv, "pcs_v1", {"max_cycles": 96}, "time- and space-varying traffic, "
     "time-of-day observation and state, bounded observations; new defaults (8x8, "
     "``max_cycles=96``, ``call_interval=300``, ``handoff_weight=10``)."),
    ("pcs_admission_v0", PcsAdmissionEnv, "pcs_admission", {"max_cycles": 96},
     "initial release."),
    ("aircraft_v0", AircraftEnv, "aircraft", {"max_cycles": 500}, "initial release."),
    ("aircraft_v1", AircraftEnv, "aircraft_v1", {"max_cycles": 300},
     "reward weights rescaled (list above), new defaults; the goals in ``state()``."),
)
# fmt: on
