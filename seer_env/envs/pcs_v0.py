"""pcs_v0: wireless cell management (guard channels for handoffs).

The classic PCS model of parallel simulation (ROSS-Models ``pcs``, after
Carothers et al., *Distributed simulation of large-scale PCS networks*) as a
cooperative-competitive MARL task. Radio cells on a ``width x height`` torus
serve mobile phones. Phones place calls, hang up and move between neighbouring
cells; a call that moves is *handed off* to the neighbour and is *dropped* if
that cell has no free channel. Every cell decides, each step, how many of its
channels to hold back as **guard channels**: a new call is admitted only while
free channels > guard, a handoff while any channel is free. Blocking a new call
costs less than dropping a call in progress (``handoff_weight``).

The step runs on the seer_env C++ runtime (``cpp/models/pcs``): phones are
events, one pending event per phone, and handoffs are cross-cell events at
``now + handoff_delay`` (the runtime's lookahead), so ``executor="parallel"``
runs a step on many threads with outputs bit-identical to ``"serial"``. A
pure-Python version of the same model is ``seer_env.reference.pcs.PcsReference``.

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
| Actions | Discrete |
| Parallel API | Yes (AEC through ``pcs_v0.env()``) |
| Agents | ``width * height``: ``cell_0 .. cell_{N-1}``, row-major (cell = y * width + x) |
| Action shape | ``Discrete(channels + 1)``: the number of guard channels |
| Observation shape | ``(10,)`` float32 |
| State shape | ``(2 * width * height,)`` float32 in [0, 1] |

## Observation (float32, per cell)

| index | value | range |
|---|---|---|
| 0 | own busy channels / ``channels`` | [0, 1] |
| 1 | guard channels of the step just run / ``channels`` | [0, 1] |
| 2 | this step's call attempts (incl. busy lines) / ``e`` | [0, inf) |
| 3 | this step's blocked new calls / ``e`` | [0, inf) |
| 4 | this step's incoming handoffs / ``e`` | [0, inf) |
| 5 | this step's dropped handoffs / ``e`` | [0, inf) |
| 6-9 | busy fraction of the neighbours x-1, x+1, y-1, y+1 | [0, 1] |

``e = phones_per_cell * step_minutes / call_interval`` is the expected number of
call attempts per cell per step, so counts are of order 1. Neighbours are read
from the runtime's boundary snapshot.

**Reward** per cell and step: ``-(blocks + handoff_weight * dropped_handoffs)``.

**infos[agent]**: that step's integer counters, the same keys every step:
``call_attempts, blocks, busy_lines, handoffs_in, dropped_handoffs, events``.

**state()**: ``[busy fraction, guard fraction]`` of every cell, interleaved.

**Episode**: no terminations; every agent is truncated after ``max_cycles``
steps.

**stats()** (``env.unwrapped.stats()``): totals over all cells since reset —
``call_attempts``, ``blocks``, ``busy_lines``, ``handoffs``,
``dropped_handoffs``, ``events`` — and ``blocking_probability`` =
``(blocks + dropped) / (attempts - busy_lines)``, the figure classic PCS runs
print.

## Model

Phones start idle with exponential times to their next call (mean
``call_interval``) and next move (mean ``move_interval``), all in minutes. A
call attempt while the phone is in a call is a *busy line*. An admitted call
lasts ``exp(call_duration)``; if the phone's next move comes first it is handed
off to a random neighbour. An idle phone simply walks to random neighbours.
With ``channels=10`` and guard 0 everywhere it is the classic model: busy lines
are about 1/3 of call attempts. One deviation from the classic model, which
hands off with zero delay: every cross-cell arrival takes at least
``handoff_delay`` minutes (details in ``cpp/models/pcs/pcs.hpp``).

## Arguments

<!-- declared arguments: generated from the model's declaration -->
``pcs_v0.parallel_env(width=32, height=32, channels=10, phones_per_cell=16,
call_interval=360.0, call_duration=180.0, move_interval=4500.0,
handoff_delay=1.0, step_minutes=60.0, handoff_weight=5.0, max_cycles=1000,
seed=None, executor=None, num_threads='auto', check=False, check_steps=2,
event_budget=50000000, render_mode=None)``

- ``width``: cells along x (a torus); 1..4096, default ``32``.
- ``height``: cells along y (a torus); 1..4096, default ``32``.
- ``channels``: channels per cell; 1..64, default ``10``.
- ``phones_per_cell``: phones per cell at reset (phones_per_cell * width *
  height <= 1e8); 1..65536, default ``16``.
- ``call_interval``: mean minutes between a phone's call attempts (exponential;
  >= call_duration / 1e4: a call's busy lines are drawn in one handler); > 0.0,
  default ``360.0``.
- ``call_duration``: mean minutes of a call (exponential); > 0.0, default
  ``180.0``.
- ``move_interval``: mean minutes between a phone's moves (exponential; >=
  call_interval / 1e4: an idle phone's moves are drawn in one handler); > 0.0,
  default ``4500.0``.
- ``handoff_delay``: minutes a phone takes to arrive in another cell (the
  runtime's lookahead: larger values give the parallel executor more work per
  synchronization round); > 0.0, default ``1.0``.
- ``step_minutes``: simulated minutes per step; > 0.0, default ``60.0``.
- ``handoff_weight``: cost of a dropped handoff relative to a blocked call; >=
  0.0, default ``5.0``.
<!-- end of declared arguments -->

- ``max_cycles``: steps until truncation, >= 1.
- ``seed``: seed of the first ``reset()`` without one (None: fresh entropy).
  ``reset()`` without a seed afterwards continues deterministically from the
  previous episode's seed.
- ``executor``, ``num_threads``: how the runtime runs a step
  (``seer_env.executor_names()``); outputs do not depend on them. The default
  ``num_threads="auto"`` lets STPA pick both at the first reset
  (``env.runtime.stpa`` says what and why).
- ``check``: run the runtime's contract checks on every step (slow).
- ``check_steps``: run them on the first ``check_steps`` steps after the first
  ``reset()`` only (default ``seer_env.env.DEFAULT_CHECK_STEPS``; 0: off): a
  breach raises ``ContractViolation`` at once; outputs do not change.
- ``event_budget``: most events one step may handle (0: unlimited).
- ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the cell load as
  a text grid, one character per cell from `` `` idle to ``@`` full) or
  ``"human"`` (prints it).

## Version history

- v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from seer_env.env import DEFAULT_CHECK_STEPS, SeerParallelEnv
from seer_env.workloads import (
    declared_parameters,
    document_arguments,
    validate_params,
    workload_spec,
)

__all__ = ["PcsEnv", "env", "parallel_env", "raw_env"]

SPEC = workload_spec("pcs")  # the declaration: parameters, spaces, keys, records
_LOAD_CHARS = " .:-=+*#%@"  # busy fraction 0 .. 1


class PcsEnv(SeerParallelEnv):
    """The pcs_v0 ParallelEnv (see the module docstring for the full documentation)."""

    metadata = {"name": "pcs_v0", "render_modes": ["ansi", "human"], "is_parallelizable": True}

    @declared_parameters(SPEC)
    def __init__(
        self,
        max_cycles: int = 1000,
        seed: int | None = None,
        executor: str | None = None,
        num_threads: int | str = "auto",
        check: bool = False,
        check_steps: int = DEFAULT_CHECK_STEPS,
        event_budget: int = 50_000_000,
        render_mode: str | None = None,
        **params: Any,
    ) -> None:
        # Model parameters, defaults and checks: the declaration (cpp/models/pcs/workload.cpp).
        self._build(
            "pcs",
            validate_params(SPEC, params),
            seed=seed,
            max_cycles=max_cycles,
            executor=executor,
            num_threads=num_threads,
            check=check,
            check_steps=check_steps,
            event_budget=event_budget,
            render_mode=render_mode,
        )

    def _build(self, model: str, config: dict[str, Any], **runtime: Any) -> None:
        """The runtime of ``model`` (``pcs``, ``pcs_v1``) and the grid's attributes."""
        super().__init__(model, config, **runtime)
        self.width = config["width"]
        self.height = config["height"]
        self.channels = config["channels"]

    def stats(self) -> dict[str, float]:
        """Totals over all cells since reset, and the blocking probability.

        Returns:
            ``call_attempts``, ``blocks``, ``busy_lines``, ``handoffs``,
            ``dropped_handoffs``, ``events`` (ints) and ``blocking_probability``
            = ``(blocks + dropped_handoffs) / (call_attempts - busy_lines)``
            (0.0 before any call).
        """
        if self._episode_seed is None:
            raise RuntimeError("stats() called before reset()")
        out: dict[str, Any] = self.sim.totals()
        offered = out["call_attempts"] - out["busy_lines"]
        lost = out["blocks"] + out["dropped_handoffs"]
        out["blocking_probability"] = lost / offered if offered else 0.0
        return out

    def _render_ansi(self) -> str:
        """Cell load as text: one character per cell (`` `` idle .. ``@`` full), one row per y."""
        busy = self.sim.state()[0::2].reshape(self.height, self.width)
        levels = np.minimum((busy * len(_LOAD_CHARS)).astype(np.int64), len(_LOAD_CHARS) - 1)
        rows = ["".join(_LOAD_CHARS[v] for v in row) for row in levels.tolist()]
        s = self.stats()
        head = (
            f"{self.metadata['name']} t={self.sim.now:g} min step {self.sim.steps}: "
            f"busy {busy.mean():.0%}, blocking {s['blocking_probability']:.3f}"
        )
        return "\n".join([head, *rows])

    def _render_human(self) -> None:
        """Print the ``"ansi"`` text."""
        print(self._render_ansi())


def parallel_env(**kwargs: Any) -> PcsEnv:
    """The pcs_v0 ParallelEnv; keyword arguments as in the module docstring."""
    return PcsEnv(**kwargs)


def raw_env(**kwargs: Any) -> AECEnv:
    """pcs_v0 as an AEC env without wrappers (``parallel_to_aec_wrapper``)."""
    return parallel_to_aec_wrapper(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """pcs_v0 as an AEC env (``parallel_to_aec``: order enforced)."""
    return parallel_to_aec(parallel_env(**kwargs))


__doc__ = document_arguments(__doc__, SPEC, "pcs_v0.parallel_env", PcsEnv.__init__)
