"""pcs_v1: guard channels under traffic that varies in time and space.

The model of :mod:`seer_env.envs.pcs` (cells on a torus, phones as
events, guard channels for handoffs) with the traffic real cellular networks
have, which no constant guard count answers well:

- **a daily profile**: every phone's call rate follows
  ``1 - daily_swing * cos(2 pi t / day_minutes)`` (quiet at midnight, busiest
  at noon);
- **a moving hot spot**: the call rate near a hot spot is multiplied by up to
  ``1 + hotspot_gain`` (Gaussian in the torus distance, ``hotspot_radius``
  cells); the hot spot crosses the grid diagonally once per day;
- **rush hours**: every phone moves up to ``1 + rush_mobility`` times as often
  around 8:00 and 17:00 (Gaussian, one hour wide), so calls are handed off
  many times at rush hours and rarely otherwise.

A guard channel pays when handoffs are frequent and the cell is full, and
costs blocked calls otherwise: the right number depends on the hour and the
cell's load. Mobility is the same everywhere on purpose: with phones walking
at random, faster areas would be emptied of phones. Cells observe the time of
day (two extra observation entries) besides pcs_v0's load, counters and
neighbours. A rate is drawn at the cell and time
where the draw happens (``cpp/models/pcs/traffic.hpp``), so every event stays
entity-local and ``executor="parallel"`` is bit-identical to ``"serial"``.

```python
from seer_env.envs import pcs_v1

env = pcs_v1.parallel_env(seed=0)
observations, infos = env.reset()
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
print(env.unwrapped.stats())
```

| | |
|---|---|
| Import | ``from seer_env.envs import pcs_v1`` or ``seer_env.make("pcs_v1")`` |
| Actions | Discrete |
| Parallel API | Yes (AEC through ``pcs_v1.env()``) |
| Agents | ``width * height``: ``cell_0 .. cell_{N-1}``, row-major (cell = y * width + x) |
| Action shape | ``Discrete(channels + 1)``: the number of guard channels |
| Observation shape | ``(12,)`` float32, bounded |
| State shape | ``(2 * width * height + 2,)`` float32 in [-1, 1]: pcs_v0's, then the time of day |

## Observation (float32, per cell)

| index | value | range |
|---|---|---|
| 0 | own busy channels / ``channels`` | [0, 1] |
| 1 | guard channels of the step just run / ``channels`` | [0, 1] |
| 2 | this step's call attempts (incl. busy lines) / ``e`` | [0, ``count_cap``] |
| 3 | this step's blocked new calls / ``e`` | [0, ``count_cap``] |
| 4 | this step's incoming handoffs / ``e`` | [0, ``count_cap``] |
| 5 | this step's dropped handoffs / ``e`` | [0, ``count_cap``] |
| 6-9 | busy fraction of the neighbours x-1, x+1, y-1, y+1 | [0, 1] |
| 10 | sin(2 pi t / ``day_minutes``), t the start of the next step | [-1, 1] |
| 11 | cos(2 pi t / ``day_minutes``) | [-1, 1] |

``e = phones_per_cell * step_minutes / call_interval`` as in pcs_v0; scaled
counts above ``count_cap`` read as ``count_cap`` (they stay finite, so the
Box is bounded).

**Reward**, **infos**, **state()**, **stats()**, **episode**, rendering and
the event semantics: ``seer_env.envs.pcs``'s (:class:`~seer_env.envs.pcs.PcsEnv`).

pcs_v0's parameters mean the same here; the traffic parameters are read by
``cpp/models/pcs/traffic.hpp``. A "day" has 24 hours of ``day_minutes / 24``
minutes each.

With ``daily_swing=0, hotspot_gain=0, rush_mobility=0`` the traffic is
pcs_v0's; only the observation (time of day, capped counts) differs.

Why these defaults (the learnable task of ``docs/tasks.md``): 8x8 cells and
4 simulated days of 24 hourly steps train in minutes on 2 cores. Calls every
300 minutes per phone load the cells enough that blocking matters;
``rush_mobility=200`` makes rush-hour handoffs frequent (moves every ~20
minutes at the peak, every 75 hours at night); ``handoff_weight=10`` prices a
dropped call well above a blocked one, as operators do. On these defaults the
best constant guard (3) scores about -138 per cell and episode, the rule
"guard 4 within 2 hours of a rush hour, else 1" about -117 (3 seeds).
"""

from seer_env.envs import VERSIONS

VERSION = VERSIONS["pcs_v1"]
parallel_env, raw_env, env = VERSION.functions(__name__)
__doc__ = VERSION.document(__doc__)  # + the Arguments and Version history, generated
