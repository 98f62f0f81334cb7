"""aircraft_v1: aircraft_v0 with reward terms scaled so that each one matters.

The model, spaces, events, rendering and arguments are ``seer_env.envs.aircraft``'s
(:class:`~seer_env.envs.aircraft.AircraftEnv`) as in aircraft_v0; only these defaults differ:

- ``num_uavs`` 256 -> 16: the learnable task's small size (docs/tasks.md).
- ``near_miss_penalty`` 1.0 -> 0.2: a near miss is counted per *beacon*
  (20 per second per close neighbour), so at 1.0 one encounter outweighed the
  whole flight.
- ``crash_penalty`` 10.0 -> 30.0: above the progress a flight can earn
  (~20 m at 16 UAVs), so crashing never pays.
- ``max_cycles`` 500 -> 300: 30 s, enough to reach any goal.

Measured on the defaults (3 seeds, return per UAV and episode): a PD goal
seeker earns ~21 m of progress and pays ~5 for ~25 near-miss beacons and ~5
for ~5 kJ of energy; hovering pays the energy and, as the wind pushes some
UAVs out, crashes; random actions crash every UAV. Goal reaching, separation
and energy are each worth a few units, so a policy that flies to its goal
while keeping its distance and sparing the battery beats one that only flies
to its goal.

```python
from seer_env.envs import aircraft_v1

env = aircraft_v1.parallel_env(seed=0)
observations, infos = env.reset()
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
```
"""

from seer_env.envs import VERSIONS

VERSION = VERSIONS["aircraft_v1"]
parallel_env, raw_env, env = VERSION.functions(__name__)
__doc__ = VERSION.document(__doc__)  # + the Arguments and Version history, generated
