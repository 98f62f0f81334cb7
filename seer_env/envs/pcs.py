"""pcs: wireless cell management (guard channels for handoffs), the env of every pcs version.

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
pure-Python version of the same model, for tests and the benchmark, is
``seer_env.testing.reference.pcs.PcsReference``.

Each version's module has a runnable example.

``step``'s action dict needs an action for every live cell: a cell left out
is a ``ValueError`` naming it (guard channels have no neutral value); a key
that is no cell's is a ``ValueError``; actions of agents that are done are
ignored (the policy of every env: ``seer_env.action_checker``).

| | |
|---|---|
| Actions | Discrete |
| Parallel API | Yes (AEC through ``pcs_v0.env()``, ``pcs_v1.env()``) |
| Agents | ``width * height``: ``cell_0 .. cell_{N-1}``, row-major (cell = y * width + x) |
| Action shape | ``Discrete(channels + 1)``: the number of guard channels |
| Action dict | one per live cell (``seer_env.action_checker``) |
| Observation shape | ``(10,)`` float32 (pcs_v1: ``(12,)``) |
| State shape | ``(2 * width * height,)`` float32 in [0, 1] (pcs_v1: ``+ 2``, in [-1, 1]) |

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

**state()**: ``[busy fraction, guard fraction]`` of every cell, interleaved;
pcs_v1 appends the time of day (observation entries 10 and 11: its traffic, so
its reward, depends on it).

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

## Rendering

``render_mode="ansi"``: ``render()`` returns the cell load as a text grid, one
character per cell from `` `` idle to ``@`` full, under a summary line;
``"human"`` prints it. ``"rgb_array"``: a ``uint8[H, W, 3]`` picture of the
torus, north up, each cell a square of about ``256 / max(width, height)``
pixels coloured by its busy fraction (dark blue idle, through green and
yellow, to red full); a cell holding guard channels gets a white dot.

## Versions

``seer_env.envs.pcs_v0`` (the classic model) and ``seer_env.envs.pcs_v1``
(traffic that varies in time and space) build this class; each version's
module lists its arguments and defaults.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seer_env.decision_env import EventDrivenDecisions
from seer_env.envs.version import EnvVersion, VersionedEnv
from seer_env.neighbours import NeighbourRule, torus_neighbours

__all__ = ["PcsEnv"]

_LOAD_CHARS = " .:-=+*#%@"  # busy fraction 0 .. 1
_RENDER_SIZE = 256  # rgb_array: about this many pixels along the longer side
# rgb_array colours of the busy fraction at these stops (dark blue, green, yellow, red).
_LOAD_STOPS = np.array([0.0, 0.4, 0.75, 1.0])
_LOAD_COLORS = np.array([[20, 30, 90], [40, 170, 90], [240, 220, 60], [220, 40, 40]], dtype=float)


class PcsEnv(VersionedEnv):
    """The ParallelEnv of every pcs version (see the module docstring)."""

    metadata = {
        "name": "pcs",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": True,
    }

    def __init__(self, version: EnvVersion, config: dict[str, Any], **options: Any) -> None:
        super().__init__(version, config, **options)
        self.width = config["width"]
        self.height = config["height"]
        self.channels = config["channels"]

    def neighbour_rule(self) -> NeighbourRule:
        """The torus: cells x-1, x+1, y-1, y+1 of each cell, static (``seer_env.neighbours``)."""
        return NeighbourRule(4, static=torus_neighbours(self.width, self.height))

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

    def _cell_state(self) -> np.ndarray:
        """``state()`` without pcs_v1's time of day: busy and guard fraction of every cell."""
        return self.sim.state()[: 2 * self.width * self.height]

    def _render_ansi(self) -> str:
        """Cell load as text: one character per cell (`` `` idle .. ``@`` full), one row per y."""
        busy = self._cell_state()[0::2].reshape(self.height, self.width)
        levels = np.minimum((busy * len(_LOAD_CHARS)).astype(np.int64), len(_LOAD_CHARS) - 1)
        rows = ["".join(_LOAD_CHARS[v] for v in row) for row in levels.tolist()]
        s = self.stats()
        head = (
            f"{self.metadata['name']} t={self.sim.now:g} min step {self.sim.steps}: "
            f"busy {busy.mean():.0%}, blocking {s['blocking_probability']:.3f}"
        )
        return "\n".join([head, *rows])

    def _render_rgb_array(self) -> np.ndarray:
        """The cell load as a picture: ``uint8[H, W, 3]``, a square of pixels per cell."""
        state = self._cell_state()
        busy = state[0::2].reshape(self.height, self.width)
        guard = state[1::2].reshape(self.height, self.width)
        side = max(1, _RENDER_SIZE // max(self.width, self.height))
        colors = np.stack([np.interp(busy, _LOAD_STOPS, _LOAD_COLORS[:, c]) for c in range(3)], -1)
        image = np.repeat(np.repeat(colors.astype(np.uint8), side, axis=0), side, axis=1)
        if side >= 3:  # a white dot in the middle of each cell that holds guard channels
            rows, cols = np.nonzero(guard > 0)
            image[rows * side + side // 2, cols * side + side // 2] = 255
        return image

    def _render_human(self) -> None:
        """Print the ``"ansi"`` text."""
        print(self._render_ansi())


class PcsAdmissionEnv(EventDrivenDecisions, PcsEnv):
    """pcs_admission's env: a cell acts at each call and handoff arrival (``SeerDecisionEnv``)."""
