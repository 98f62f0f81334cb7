"""pcs_admission_v0: call admission control, decided at each arrival.

pcs_v1's cells, phones and traffic (a daily profile, a moving hot spot, rush
hours), with the classic decision of the call admission literature taken
where it happens: when a new call or a handed-off call arrives at a cell with
a channel free, the cell decides whether to admit it. A refused new call is a
blocked call, a refused handoff a dropped one; with no channel free the
arrival is blocked (dropped) without asking. There are no guard channels: a
policy that refuses new calls when few channels are free plays them.

Cells act when their events ask, not every step: this is a
``seer_env.SeerDecisionEnv`` (docs/decisions.md). ``env.agents`` are the
cells that must decide now, ``infos[cell]["decision_time"]`` when each
asked; the requests of one lookahead window (``handoff_delay``) come in one
batch, with the same bytes as deciding them one at a time.

```python
from seer_env.envs import pcs_admission_v0

env = pcs_admission_v0.parallel_env(seed=0)
observations, infos = env.reset()
while env.agents:
    # admit a handoff whenever a channel is free, a new call while > 2 are
    actions = {
        cell: int(obs[1] > 0.5 or round((1 - obs[0]) * env.unwrapped.channels) > 2)
        for cell, obs in observations.items()
    }
    observations, rewards, terminations, truncations, infos = env.step(actions)
print(env.unwrapped.stats())
```

| | |
|---|---|
| Import | ``from seer_env.envs import pcs_admission_v0`` or ``seer_env.make("pcs_admission_v0")`` |
| Actions | Discrete(2): 0 refuses the arrival, 1 admits it |
| Agents | ``width * height`` cells; those in ``env.agents`` act |
| Observation shape | ``(12,)`` float32, bounded: pcs_v1's; entry 1: 1 a handoff, 0 a new call |
| State shape | ``(2 * width * height + 2,)`` float32: pcs_v1's (guard entries 0) |

**Reward** per cell, accrued at every step (hour) boundary:
``-(blocks + handoff_weight * dropped_handoffs)`` of that step, refusals
included; a cell's return carries what accrued since its previous return.
The task and its baselines (always admit, the guard-channel rule, PPO):
docs/tasks.md.
"""

from seer_env.envs import VERSIONS

VERSION = VERSIONS["pcs_admission_v0"]
parallel_env, raw_env, env = VERSION.functions(__name__)
__doc__ = VERSION.document(__doc__)  # + the Arguments and Version history, generated
