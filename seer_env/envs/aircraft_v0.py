"""aircraft_v0: a UAV swarm flying to its goals, sharing state by radio beacons.

The model, spaces, rewards, infos and rendering are ``seer_env.envs.aircraft``'s
(:class:`~seer_env.envs.aircraft.AircraftEnv`); this version's arguments and
defaults are below.

```python
from seer_env.envs import aircraft_v0

env = aircraft_v0.parallel_env(num_uavs=256, executor="parallel", num_threads=2, seed=0)
observations, infos = env.reset()
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
```

| | |
|---|---|
| Import | ``from seer_env.envs import aircraft_v0`` or ``seer_env.make("aircraft_v0")`` |

## Arguments

<!-- declared arguments: generated from the model's declaration -->
``aircraft_v0.parallel_env(num_uavs=256, substeps=20, wind_modes=8,
beacon_every=10, comm_radius=30.0, comm_latency=0.05, safe_radius=3.0,
k_neighbors=4, max_neighbors=16, neighbor_timeout=0.5, dt=0.1, arena_size=None,
ceiling=60.0, wind_speed=3.0, wind_seed=0, drag=0.1, gravity=9.81,
max_rate=3.0, rate_gain=20.0, battery_capacity=100000.0, power_idle=20.0,
power_thrust=150.0, power_rate=10.0, near_miss_penalty=1.0,
energy_weight=0.001, crash_penalty=10.0, max_cycles=500, seed=None,
executor=None, num_threads='auto', check=False, check_steps=2,
event_budget=50000000, render_mode=None)``

- ``num_uavs``: agents; 1..1048576, default ``256``.
- ``substeps``: RK4 substeps per step; 1..10000, default ``20``.
- ``wind_modes``: sinusoidal wind modes; 0..256, default ``8``.
- ``beacon_every``: substeps between beacons; 1..1000000, default ``10``.
- ``comm_radius``: beacon range, metres; (0.0, 1000000.0], default ``30.0``.
- ``comm_latency``: beacon delay, seconds (the runtime's lookahead: larger
  values give the parallel executor more work per round); (0.0, 1000.0],
  default ``0.05``.
- ``safe_radius``: near-miss distance, metres; [0.0, 1000000.0], default
  ``3.0``.
- ``k_neighbors``: neighbours in the observation (<= max_neighbors); 0..32,
  default ``4``.
- ``max_neighbors``: neighbour-table size; 1..32, default ``16``.
- ``neighbor_timeout``: seconds after which a table entry is no longer
  observed; [0.0, 1000000.0], default ``0.5``.
- ``dt``: seconds per step; (0.0, 1000.0], default ``0.1``.
- ``arena_size``: half-width of the square airspace, metres; (0.0, 10000000.0],
  default ``6.25 * sqrt(num_uavs)``.
- ``ceiling``: airspace ceiling, metres; (0.0, 1000000.0], default ``60.0``.
- ``wind_speed``: total amplitude of the wind modes, m/s; [0.0, 1000.0],
  default ``3.0``.
- ``wind_seed``: scenario seed of the wind; 0..9007199254740992, default ``0``.
- ``drag``: quadratic drag per unit mass, 1/m; [0.0, 1000.0], default ``0.1``.
- ``gravity``: m/s^2; [0.0, 1000.0], default ``9.81``.
- ``max_rate``: body-rate command at |action| = 1, rad/s; (0.0, 1000.0],
  default ``3.0``.
- ``rate_gain``: body-rate controller gain, 1/s; [0.0, 10000.0], default
  ``20.0``.
- ``battery_capacity``: battery, joules; (0.0, 1000000000000.0], default
  ``100000.0``.
- ``power_idle``: power drawn at rest, watts; [0.0, 1000000000.0], default
  ``20.0``.
- ``power_thrust``: power per (1 + thrust)^2, watts; [0.0, 1000000000.0],
  default ``150.0``.
- ``power_rate``: power per |rates|^2, watts; [0.0, 1000000000.0], default
  ``10.0``.
- ``near_miss_penalty``: reward weight of a near miss; [0.0, 1000000000.0],
  default ``1.0``.
- ``energy_weight``: reward weight of a joule used; [0.0, 1000000000.0],
  default ``0.001``.
- ``crash_penalty``: reward weight of a crash; [0.0, 1000000000.0], default
  ``10.0``.
- ``max_cycles``: steps until every agent is truncated, >= 1 (an env version
  sets its own default); default ``500``.
- ``seed``: seed of the first ``reset()`` without one (None: fresh entropy);
  ``reset()`` without a seed afterwards continues deterministically from the
  previous episode's seed; default ``None``.
- ``executor``: a name from ``seer_env.executor_names()``, or None: chosen with
  ``num_threads`` (``"serial"`` for 1 thread, else ``"parallel"``; STPA's
  choice for ``"auto"``); outputs never depend on it; default ``None``.
- ``num_threads``: threads of the executor (the calling thread included), or
  ``"auto"``: STPA chooses executor and pool size at the first ``reset()`` from
  a short preflight (``env.runtime.stpa`` says what and why; docs/stpa.md);
  default ``'auto'``.
- ``check``: run the contract checks on every step (no handler writes another
  entity's state or the snapshot; one handler at a time; about 1.3-3x an
  unchecked serial step); default ``False``.
- ``check_steps``: run the same checks on the first ``check_steps`` steps after
  the first ``reset()`` only (0: off), so that a breach raises
  ``ContractViolation`` at once; outputs are byte-identical either way; default
  ``2``.
- ``event_budget``: most events one step may handle (0: unlimited); default
  ``50000000``.
- ``render_mode``: None or one of the env's ``metadata['render_modes']``;
  default ``None``.
<!-- end of declared arguments -->

## Version history

- v0: initial release.
"""

from seer_env.envs.aircraft import AircraftEnv
from seer_env.envs.version import EnvVersion

VERSION = EnvVersion(
    "aircraft_v0", AircraftEnv, declaration="aircraft", defaults={"max_cycles": 500}
)
parallel_env, raw_env, env = VERSION.functions(__name__)
__doc__ = VERSION.document(__doc__)
