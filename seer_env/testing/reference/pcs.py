"""pcs_v0 in pure Python: the oracle for ``cpp/models/pcs`` and the benchmark baseline.

This is what a user would write in Python: a serial event loop over a ``heapq``
in the contract's key order ``(time, source, seq)``, one Philox stream per cell
(``seer_env.testing.rng.EntityRng``, the same numbers as the C++ runtime), and a
PettingZoo ParallelEnv around it. It follows ``cpp/models/pcs/pcs.hpp`` draw for
draw, so its observations (float32 bytes), rewards, infos and ``stats()`` are
identical to ``pcs_v0``'s for the same arguments and seed.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from seer_env.seeding import episode_seed
from seer_env.testing.rng import EntityRng
from seer_env.validation import validate_seed
from seer_env.workloads import declared_parameters, workload_spec

SPEC = workload_spec("pcs")
NEXT_CALL, CALL_END, HANDOFF_OUT, HANDOFF_IN = range(4)
INFO_KEYS = tuple(SPEC["info_keys"])
# Phone payload fields (a phone is a list, carried by its one pending event).
NEXT_CALL_T, CALL_END_T, NEXT_MOVE_T, PHONE_ID, CHANNEL = range(5)
NO_CHANNEL = 0xFFFFFFFF


class PcsReference(ParallelEnv):
    """The pcs_v0 workload, serially, in Python (same arguments as ``pcs_v0.parallel_env``)."""

    metadata = {"name": "pcs_reference_v0", "render_modes": [], "is_parallelizable": True}

    @declared_parameters(SPEC)
    def __init__(
        self,
        max_cycles: int = 1000,
        seed: int | None = None,
        render_mode: str | None = None,
        **params: Any,
    ) -> None:
        # Parameters and defaults: the model's declaration (cpp/models/pcs/workload.cpp).
        if render_mode is not None:
            raise ValueError(f"render_mode must be None, got {render_mode!r}")
        self.render_mode = None
        self.width, self.height = int(params["width"]), int(params["height"])
        self.channels = int(params["channels"])
        self.phones_per_cell = int(params["phones_per_cell"])
        self.call_interval = float(params["call_interval"])
        self.call_duration = float(params["call_duration"])
        self.move_interval = float(params["move_interval"])
        self.handoff_delay = float(params["handoff_delay"])
        self.step_minutes = float(params["step_minutes"])
        self.handoff_weight = float(params["handoff_weight"])
        self.max_cycles = int(max_cycles)
        self._seed = validate_seed(seed)
        self._episode_seed: int | None = None
        # Counts are scaled by the expected call attempts per cell per step.
        self._count_scale = self.call_interval / (self.phones_per_cell * self.step_minutes)

        n = self.width * self.height
        self.possible_agents = [f"cell_{i}" for i in range(n)]
        self.agents: list[str] = []
        inf = np.float32(np.inf)
        high = np.array([1, 1, inf, inf, inf, inf, 1, 1, 1, 1], dtype=np.float32)
        obs_space = spaces.Box(np.zeros(10, dtype=np.float32), high, dtype=np.float32)
        act_space = spaces.Discrete(self.channels + 1)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, 1.0, (2 * n,), dtype=np.float32)
        # Neighbours in the order of the direction drawn with below(4): x-1, x+1, y-1, y+1.
        self._neighbours = []
        for cell in range(n):
            x, y = cell % self.width, cell // self.width
            w, h = self.width, self.height
            self._neighbours.append(
                (
                    y * w + (x - 1) % w,
                    y * w + (x + 1) % w,
                    ((y - 1) % h) * w + x,
                    ((y + 1) % h) * w + x,
                )
            )

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``."""
        return self.action_spaces[agent]

    # -- the model ------------------------------------------------------------------------------
    def _schedule(self, source: int, target: int, time: float, kind: int, phone: list) -> None:
        heapq.heappush(self._queue, (time, source, self._seq[source], target, kind, phone))
        self._seq[source] += 1

    def _count(self, cell: int, key: int) -> None:
        self._step_counts[cell][key] += 1
        self._totals[cell][key] += 1

    def _schedule_idle(self, cell: int, now: float, phone: list) -> None:
        """Walk an idle phone until its next move passes its next call; send its NEXT_CALL."""
        rng = self._rngs[cell]
        at = cell
        while True:
            while phone[NEXT_MOVE_T] < phone[NEXT_CALL_T]:
                at = self._neighbours[at][rng.below(4)]
                phone[NEXT_MOVE_T] += rng.exponential(self.move_interval)
            # The one deviation (pcs.hpp): nothing reaches another cell before now + L.
            earliest = now if at == cell else now + self.handoff_delay
            if phone[NEXT_CALL_T] >= earliest:
                break
            phone[NEXT_CALL_T] = earliest
        self._schedule(cell, at, phone[NEXT_CALL_T], NEXT_CALL, phone)

    def _schedule_in_call(self, cell: int, phone: list) -> None:
        if phone[NEXT_MOVE_T] < phone[CALL_END_T]:
            self._schedule(cell, cell, phone[NEXT_MOVE_T], HANDOFF_OUT, phone)
        else:
            self._schedule(cell, cell, phone[CALL_END_T], CALL_END, phone)

    def _take_channel(self, cell: int, phone: list) -> None:
        mask = self._masks[cell]
        channel = (~mask & (mask + 1)).bit_length() - 1  # lowest free channel
        phone[CHANNEL] = channel
        self._masks[cell] = mask | (1 << channel)

    def _release_channel(self, cell: int, phone: list) -> None:
        channel = phone[CHANNEL]
        assert self._masks[cell] >> channel & 1, "phone releases a channel it does not hold"
        self._masks[cell] &= ~(1 << channel)
        phone[CHANNEL] = NO_CHANNEL

    def _handle(self, now: float, cell: int, kind: int, phone: list) -> None:
        rng = self._rngs[cell]
        self._count(cell, 5)  # events
        if kind == NEXT_CALL:
            self._count(cell, 0)
            free = self.channels - self._masks[cell].bit_count()
            if free <= self._guards[cell]:
                self._count(cell, 1)
                phone[NEXT_CALL_T] = now + rng.exponential(self.call_interval)
                self._schedule_idle(cell, now, phone)
                return
            self._take_channel(cell, phone)
            phone[CALL_END_T] = now + rng.exponential(self.call_duration)
            phone[NEXT_CALL_T] = now + rng.exponential(self.call_interval)
            while phone[NEXT_CALL_T] < phone[CALL_END_T]:
                self._count(cell, 2)
                self._count(cell, 0)
                phone[NEXT_CALL_T] += rng.exponential(self.call_interval)
            self._schedule_in_call(cell, phone)
        elif kind == CALL_END:
            self._release_channel(cell, phone)
            phone[CALL_END_T] = math.inf
            self._schedule_idle(cell, now, phone)
        elif kind == HANDOFF_OUT:
            self._release_channel(cell, phone)
            target = self._neighbours[cell][rng.below(4)]
            self._schedule(cell, target, now + self.handoff_delay, HANDOFF_IN, phone)
        else:  # HANDOFF_IN
            self._count(cell, 3)
            phone[NEXT_MOVE_T] = now + rng.exponential(self.move_interval)
            if self._masks[cell].bit_count() == self.channels:
                self._count(cell, 4)
                phone[CALL_END_T] = math.inf
                self._schedule_idle(cell, now, phone)
                return
            self._take_channel(cell, phone)
            phone[CALL_END_T] = max(phone[CALL_END_T], now)  # ended in transit
            self._schedule_in_call(cell, phone)

    # -- outputs --------------------------------------------------------------------------------
    def _observe(self, cell: int) -> np.ndarray:
        c = self.channels
        counts = self._step_counts[cell]
        scale = self._count_scale
        busy = [self._masks[nb].bit_count() / c for nb in self._neighbours[cell]]
        values = [self._masks[cell].bit_count() / c, self._guards[cell] / c]
        values += [counts[0] * scale, counts[1] * scale, counts[3] * scale, counts[4] * scale]
        return np.array(values + busy, dtype=np.float32)

    def _reward(self, cell: int) -> float:
        counts = self._step_counts[cell]
        return 0.0 - (counts[1] + self.handoff_weight * counts[4])

    def _info(self, cell: int) -> dict[str, int]:
        return dict(zip(INFO_KEYS, self._step_counts[cell]))

    def state(self) -> np.ndarray:
        """Busy fraction and guard fraction of every cell, interleaved."""
        c = self.channels
        values = []
        for cell in range(len(self.possible_agents)):
            values += [self._masks[cell].bit_count() / c, self._guards[cell] / c]
        return np.array(values, dtype=np.float32)

    def stats(self) -> dict[str, float]:
        """Totals over all cells since reset, and the blocking probability."""
        sums = [sum(t[k] for t in self._totals) for k in range(len(INFO_KEYS))]
        attempts, blocks, busy, handoffs, dropped, events = sums
        offered = attempts - busy
        return {
            "call_attempts": attempts,
            "blocks": blocks,
            "busy_lines": busy,
            "handoffs": handoffs,
            "dropped_handoffs": dropped,
            "events": events,
            "blocking_probability": (blocks + dropped) / offered if offered else 0.0,
        }

    # -- the ParallelEnv API --------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start an episode (``reset()`` without a seed continues like ``pcs_v0``)."""
        seed = episode_seed(validate_seed(seed), self._episode_seed, self._seed)
        self._episode_seed = seed
        n = len(self.possible_agents)
        self._rngs = [EntityRng(seed, cell) for cell in range(n)]
        self._seq = [0] * n
        self._queue: list[tuple] = []
        self._masks = [0] * n
        self._guards = [0] * n
        self._step_counts = [[0] * len(INFO_KEYS) for _ in range(n)]
        self._totals = [[0] * len(INFO_KEYS) for _ in range(n)]
        self._steps = 0
        for cell in range(n):
            rng = self._rngs[cell]
            for i in range(self.phones_per_cell):
                phone = [0.0, math.inf, 0.0, cell * self.phones_per_cell + i, NO_CHANNEL]
                phone[NEXT_CALL_T] = 0.0 + rng.exponential(self.call_interval)
                phone[NEXT_MOVE_T] = 0.0 + rng.exponential(self.move_interval)
                self._schedule_idle(cell, 0.0, phone)
        self.agents = list(self.possible_agents)
        obs = {a: self._observe(i) for i, a in enumerate(self.agents)}
        infos = {a: self._info(i) for i, a in enumerate(self.agents)}
        return obs, infos

    def step(self, actions: dict):
        """Apply guard counts, run the events of one step window, return the five dicts."""
        if not self.agents:
            raise RuntimeError("step() called with no live agents; call reset()")
        for cell, agent in enumerate(self.agents):
            guard = int(actions[agent])
            if not 0 <= guard <= self.channels:
                raise ValueError(f"actions[{agent!r}] must be in [0, {self.channels}], got {guard}")
            self._guards[cell] = guard
            self._step_counts[cell] = [0] * len(INFO_KEYS)
        self._steps += 1
        t_end = self._steps * self.step_minutes
        queue = self._queue
        while queue and queue[0][0] < t_end:
            now, _, _, cell, kind, phone = heapq.heappop(queue)
            self._handle(now, cell, kind, phone)
        truncated = self._steps >= self.max_cycles
        agents = self.agents
        obs = {a: self._observe(i) for i, a in enumerate(agents)}
        rewards = {a: self._reward(i) for i, a in enumerate(agents)}
        terms = {a: False for a in agents}
        truncs = {a: truncated for a in agents}
        infos = {a: self._info(i) for i, a in enumerate(agents)}
        if truncated:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    @property
    def pending_count(self) -> int:
        """Pending events (one per phone, plus none else)."""
        return len(self._queue)
