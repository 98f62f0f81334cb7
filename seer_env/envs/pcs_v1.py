"""pcs_v1: guard channels under traffic that varies in time and space.

The model of :mod:`seer_env.envs.pcs_v0` (cells on a torus, phones as
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

**Reward**, **infos**, **state()**, **stats()**, **episode** and the event
semantics: as pcs_v0 (see its docstring).

## Arguments

``pcs_v1.parallel_env(width=8, height=8, channels=10, phones_per_cell=16,
call_interval=300.0, call_duration=180.0, move_interval=4500.0,
handoff_delay=1.0, step_minutes=60.0, handoff_weight=10.0, day_minutes=1440.0,
daily_swing=0.5, hotspot_gain=1.5, hotspot_radius=1.5, rush_mobility=200.0,
count_cap=8.0, max_cycles=96, seed=None, executor=None, num_threads="auto",
check=False, event_budget=50_000_000, render_mode=None)``

pcs_v0's arguments mean the same here. New:

- ``day_minutes``: length of the traffic cycle in minutes, > 0.
- ``daily_swing``: amplitude of the daily call-rate profile, in [0, 0.99].
- ``hotspot_gain``: extra call rate at the hot spot's centre (0: none), in [0, 100].
- ``hotspot_radius``: the hot spot's Gaussian width in cells, > 0.
- ``rush_mobility``: extra move rate at the rush hours' peaks (0: none), >= 0.
  A "day" has 24 hours of ``day_minutes / 24`` minutes each.
- ``count_cap``: largest scaled count observed, > 0.

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

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from seer_env.env import SeerParallelEnv, validate_int, validate_real
from seer_env.envs.pcs_v0 import PcsEnv

__all__ = ["PcsV1Env", "env", "parallel_env", "raw_env"]


class PcsV1Env(PcsEnv):
    """The pcs_v1 ParallelEnv (see the module docstring for the full documentation)."""

    metadata = {"name": "pcs_v1", "render_modes": ["ansi", "human"], "is_parallelizable": True}

    def __init__(
        self,
        width: int = 8,
        height: int = 8,
        channels: int = 10,
        phones_per_cell: int = 16,
        call_interval: float = 300.0,
        call_duration: float = 180.0,
        move_interval: float = 4500.0,
        handoff_delay: float = 1.0,
        step_minutes: float = 60.0,
        handoff_weight: float = 10.0,
        day_minutes: float = 1440.0,
        daily_swing: float = 0.5,
        hotspot_gain: float = 1.5,
        hotspot_radius: float = 1.5,
        rush_mobility: float = 200.0,
        count_cap: float = 8.0,
        max_cycles: int = 96,
        seed: int | None = None,
        executor: str | None = None,
        num_threads: int | str = "auto",
        check: bool = False,
        event_budget: int = 50_000_000,
        render_mode: str | None = None,
    ) -> None:
        config = {
            "width": validate_int("width", width, 1, 4096),
            "height": validate_int("height", height, 1, 4096),
            "channels": validate_int("channels", channels, 1, 64),
            "phones_per_cell": validate_int("phones_per_cell", phones_per_cell, 1, 65536),
            "call_interval": validate_real("call_interval", call_interval, 0.0, low_open=True),
            "call_duration": validate_real("call_duration", call_duration, 0.0, low_open=True),
            "move_interval": validate_real("move_interval", move_interval, 0.0, low_open=True),
            "handoff_delay": validate_real("handoff_delay", handoff_delay, 0.0, low_open=True),
            "step_minutes": validate_real("step_minutes", step_minutes, 0.0, low_open=True),
            "handoff_weight": validate_real("handoff_weight", handoff_weight, 0.0),
            "day_minutes": validate_real("day_minutes", day_minutes, 0.0, low_open=True),
            "daily_swing": validate_real("daily_swing", daily_swing, 0.0, 0.99),
            "hotspot_gain": validate_real("hotspot_gain", hotspot_gain, 0.0, 100.0),
            "hotspot_radius": validate_real("hotspot_radius", hotspot_radius, 0.0, low_open=True),
            "rush_mobility": validate_real("rush_mobility", rush_mobility, 0.0, 1e6),
            "count_cap": validate_real("count_cap", count_cap, 0.0, low_open=True),
            "time_features": 1,
        }
        phones = config["phones_per_cell"] * config["width"] * config["height"]
        if phones > 10**8:
            raise ValueError(
                f"phones_per_cell * width * height must be <= 1e8 (pending events), got {phones}"
            )
        SeerParallelEnv.__init__(
            self,
            "pcs",
            config,
            seed=seed,
            max_cycles=max_cycles,
            executor=executor,
            num_threads=num_threads,
            check=check,
            event_budget=event_budget,
            render_mode=render_mode,
        )
        self.width = config["width"]
        self.height = config["height"]
        self.channels = config["channels"]


def parallel_env(**kwargs: Any) -> PcsV1Env:
    """The pcs_v1 ParallelEnv; keyword arguments as in the module docstring."""
    return PcsV1Env(**kwargs)


def raw_env(**kwargs: Any) -> AECEnv:
    """pcs_v1 as an AEC env without wrappers (``parallel_to_aec_wrapper``)."""
    return parallel_to_aec_wrapper(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """pcs_v1 as an AEC env (``parallel_to_aec``: order enforced)."""
    return parallel_to_aec(parallel_env(**kwargs))
