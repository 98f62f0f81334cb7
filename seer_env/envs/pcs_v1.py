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
| State shape | ``(2 * width * height,)`` float32 in [0, 1] |

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

## Arguments

<!-- declared arguments: generated from the model's declaration -->
``pcs_v1.parallel_env(width=8, height=8, channels=10, phones_per_cell=16,
call_interval=300.0, call_duration=180.0, move_interval=4500.0,
handoff_delay=1.0, step_minutes=60.0, handoff_weight=10.0, day_minutes=1440.0,
daily_swing=0.5, hotspot_gain=1.5, hotspot_radius=1.5, rush_mobility=200.0,
count_cap=8.0, max_cycles=96, seed=None, executor=None, num_threads='auto',
check=False, check_steps=2, event_budget=50000000, render_mode=None)``

- ``width``: cells along x (a torus); 1..4096, default ``8``.
- ``height``: cells along y (a torus); 1..4096, default ``8``.
- ``channels``: channels per cell; 1..64, default ``10``.
- ``phones_per_cell``: phones per cell at reset (phones_per_cell * width *
  height <= 1e8); 1..65536, default ``16``.
- ``call_interval``: mean minutes between a phone's call attempts (exponential;
  >= call_duration / 1e4: a call's busy lines are drawn in one handler); > 0.0,
  default ``300.0``.
- ``call_duration``: mean minutes of a call (exponential); > 0.0, default
  ``180.0``.
- ``move_interval``: mean minutes between a phone's moves (exponential; >=
  call_interval / 1e4 and >= handoff_delay / 1e4: an idle phone's moves are
  drawn in one handler); > 0.0, default ``4500.0``.
- ``handoff_delay``: minutes a phone takes to arrive in another cell (the
  runtime's lookahead: larger values give the parallel executor more work per
  synchronization round); > 0.0, default ``1.0``.
- ``step_minutes``: simulated minutes per step; > 0.0, default ``60.0``.
- ``handoff_weight``: cost of a dropped handoff relative to a blocked call; >=
  0.0, default ``10.0``.
- ``day_minutes``: minutes of one traffic cycle (a day of 24 hours); > 0.0,
  default ``1440.0``.
- ``daily_swing``: amplitude of the daily call-rate profile 1 - daily_swing *
  cos(2 pi t / day_minutes); [0.0, 0.99], default ``0.5``.
- ``hotspot_gain``: extra call rate at the moving hot spot's centre (0: none);
  [0.0, 100.0], default ``1.5``.
- ``hotspot_radius``: the hot spot's Gaussian width in cells; > 0.0, default
  ``1.5``.
- ``rush_mobility``: extra move rate at the 8:00 and 17:00 rush hours' peaks
  (0: none); >= 0.0, default ``200.0``.
- ``count_cap``: largest scaled count observed (bounds the Box); > 0.0, default
  ``8.0``.
- ``max_cycles``: steps until every agent is truncated, >= 1 (an env version
  sets its own default); default ``96``.
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

## Version history

- v1: time- and space-varying traffic, time-of-day observation, bounded
  observations; new defaults (8x8, ``max_cycles=96``, ``call_interval=300``,
  ``handoff_weight=10``).
- v0: initial release.
"""

from seer_env.envs.pcs import PcsEnv
from seer_env.envs.version import EnvVersion

# The declaration (cpp/models/pcs/workload.cpp): pcs's parameters with the
# task's defaults, and the traffic parameters.
VERSION = EnvVersion("pcs_v1", PcsEnv, declaration="pcs_v1", defaults={"max_cycles": 96})
parallel_env, raw_env, env = VERSION.functions(__name__)
__doc__ = VERSION.document(__doc__)
