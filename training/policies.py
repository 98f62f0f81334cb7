"""Fixed policies for the baselines: random, constant and hand-written rules.

A policy maps the observations of every possible agent of one env
(``float32[num_agents, obs_dim]``) to one action row per agent, as
``env.step_arrays`` takes them. Each is a small class with a ``name`` so the
results table can say which one scored.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces


class RandomPolicy:
    """Uniform actions from the action space, drawn from its own seeded stream."""

    def __init__(self, space: spaces.Space, seed: int) -> None:
        self.space = space
        self.rng = np.random.default_rng(seed)
        self.name = "random"

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """One action row per agent for the observations ``obs``."""
        n = len(obs)
        if isinstance(self.space, spaces.Discrete):
            return self.rng.integers(0, self.space.n, size=n)
        low, high = self.space.low, self.space.high
        return self.rng.uniform(low, high, size=(n, *self.space.shape)).astype(np.float32)


class ConstantGuard:
    """pcs: the same guard count in every cell at every step."""

    def __init__(self, guard: int) -> None:
        self.guard = guard
        self.name = f"constant guard {guard}"

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """One action row per agent for the observations ``obs``."""
        return np.full(len(obs), self.guard, dtype=np.int64)


def hour_of_day(obs: np.ndarray) -> np.ndarray:
    """pcs_v1: the hour (0..24) from the time-of-day observation (entries 10, 11)."""
    return (np.arctan2(obs[:, 10], obs[:, 11]) / (2 * np.pi) * 24.0) % 24.0


class RushHourGuard:
    """pcs_v1: ``rush`` guard channels within ``window`` hours of 8:00 or 17:00, else ``base``.

    Rush hours are when calls hand off; the rest of the day a guard only
    blocks new calls.
    """

    def __init__(self, rush: int, base: int, window: float = 2.0) -> None:
        self.rush, self.base, self.window = rush, base, window
        self.name = f"rush-hour rule ({rush} at rush hours, else {base})"

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """One action row per agent for the observations ``obs``."""
        h = hour_of_day(obs)
        near = np.minimum(abs(h - 8.0), 24.0 - abs(h - 8.0))
        near = np.minimum(near, np.minimum(abs(h - 17.0), 24.0 - abs(h - 17.0)))
        return np.where(near <= self.window + 1e-6, self.rush, self.base).astype(np.int64)


class Hover:
    """aircraft: zero actions (hover thrust, no rotation)."""

    name = "hover"

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """One action row per agent for the observations ``obs``."""
        return np.zeros((len(obs), 4), dtype=np.float32)


class GoalSeeker:
    """aircraft: a PD position controller toward the goal, ignoring the neighbours.

    Desired acceleration ``kp * (goal - p) - kd * v`` (capped at ``max_acc``)
    plus gravity gives the desired thrust direction; roll and pitch rates turn
    the body z axis toward it, the yaw rate damps the yaw rotation, and the
    collective thrust is the desired one projected on the current body z.
    Everything comes from the observation (layout in aircraft_v0's docstring);
    ``arena`` is the env's ``arena_size`` (positions are observed divided by it).
    """

    name = "goal seeker (PD)"

    def __init__(
        self,
        arena: float,
        gravity: float = 9.81,
        kp: float = 0.6,
        kd: float = 1.2,
        max_acc: float = 4.0,
        turn_gain: float = 3.0,
        max_rate: float = 3.0,
    ) -> None:
        self.arena, self.gravity = arena, gravity
        self.kp, self.kd, self.max_acc = kp, kd, max_acc
        self.turn_gain, self.max_rate = turn_gain, max_rate

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """One action row per agent for the observations ``obs``."""
        vel = obs[:, 3:6].astype(np.float64) * 10.0
        w, x, y, z = (obs[:, 6 + i].astype(np.float64) for i in range(4))
        to_goal = obs[:, 13:16].astype(np.float64) * self.arena
        acc = self.kp * to_goal - self.kd * vel
        norm = np.linalg.norm(acc, axis=1, keepdims=True)
        acc *= np.minimum(1.0, self.max_acc / np.maximum(norm, 1e-9))
        want = acc + np.array([0.0, 0.0, self.gravity])
        # Rows of R(q): the body axes in world coordinates.
        bx = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)], 1)
        by = np.stack([2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)], 1)
        bz = np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], 1)
        want_dir = want / np.linalg.norm(want, axis=1, keepdims=True)
        turn = np.cross(bz, want_dir)  # rotation axis (world) taking bz to want_dir
        roll = self.turn_gain * np.einsum("ij,ij->i", turn, bx)
        pitch = self.turn_gain * np.einsum("ij,ij->i", turn, by)
        yaw = -obs[:, 12].astype(np.float64)  # damp the yaw rate (observed / max_rate)
        thrust = np.einsum("ij,ij->i", want, bz) / self.gravity - 1.0
        out = np.stack([thrust, roll / self.max_rate, pitch / self.max_rate, yaw], 1)
        return np.clip(out, -1.0, 1.0).astype(np.float32)
