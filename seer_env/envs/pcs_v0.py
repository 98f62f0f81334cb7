"""pcs_v0: the classic PCS model, guard channels for handoffs.

Cells on a torus serve phones that call, hang up and move; every cell picks
its number of guard channels each step. The model, spaces, rewards, infos and
rendering are ``seer_env.envs.pcs``'s (:class:`~seer_env.envs.pcs.PcsEnv`);
this version's arguments and defaults are below.

```python
from seer_env.envs import pcs_v0

env = pcs_v0.parallel_env(width=32, height=32, executor="serial", seed=0)
observations, infos = env.reset()
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
print(env.unwrapped.stats())
```

| | |
|---|---|
| Import | ``from seer_env.envs import pcs_v0`` or ``seer_env.make("pcs_v0")`` |
| Observation shape | ``(10,)`` float32 |
"""

from seer_env.envs import VERSIONS

VERSION = VERSIONS["pcs_v0"]
parallel_env, raw_env, env = VERSION.functions(__name__)
__doc__ = VERSION.document(__doc__)  # + the Arguments and Version history, generated
