"""aircraft_v1: aircraft_v0 with reward terms scaled so that each one matters.

The model, spaces, events and arguments are aircraft_v0's (see its
docstring); only these defaults differ:

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

## Arguments

As aircraft_v0, with the defaults above: ``aircraft_v1.parallel_env(num_uavs=16,
near_miss_penalty=0.2, crash_penalty=30.0, max_cycles=300, **aircraft_v0_arguments)``.

## Version history

- v1: reward weights rescaled (list above), new defaults.
- v0: initial release.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from seer_env.envs.aircraft_v0 import AircraftEnv

__all__ = ["AircraftV1Env", "env", "parallel_env", "raw_env"]


class AircraftV1Env(AircraftEnv):
    """The aircraft_v1 ParallelEnv (see the module docstring)."""

    metadata = {**AircraftEnv.metadata, "name": "aircraft_v1"}

    def __init__(
        self,
        num_uavs: int = 16,
        near_miss_penalty: float = 0.2,
        crash_penalty: float = 30.0,
        max_cycles: int = 300,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_uavs=num_uavs,
            near_miss_penalty=near_miss_penalty,
            crash_penalty=crash_penalty,
            max_cycles=max_cycles,
            **kwargs,
        )


def parallel_env(**kwargs: Any) -> AircraftV1Env:
    """The aircraft_v1 ParallelEnv; keyword arguments as aircraft_v0's, v1 defaults."""
    return AircraftV1Env(**kwargs)


def raw_env(**kwargs: Any) -> AECEnv:
    """aircraft_v1 as an AEC env without wrappers (``parallel_to_aec_wrapper``)."""
    return parallel_to_aec_wrapper(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """aircraft_v1 as an AEC env (``parallel_to_aec``: order enforced)."""
    return parallel_to_aec(parallel_env(**kwargs))
