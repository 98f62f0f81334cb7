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
"""

from seer_env.envs import VERSIONS

VERSION = VERSIONS["aircraft_v0"]
parallel_env, raw_env, env = VERSION.functions(__name__)
__doc__ = VERSION.document(__doc__)  # + the Arguments and Version history, generated
