"""Small configs of every built-in env and byte-exact traces, for the integration tests."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from gymnasium import spaces

import seer_env

# Small and quick, with something happening every step. Envs not listed here
# (added later) run with their defaults shrunk by nothing: add them.
SMALL: dict[str, dict] = {
    "pcs_v0": dict(width=4, height=4, phones_per_cell=8, move_interval=300.0),
    "aircraft_v0": dict(num_uavs=8, substeps=2),
}

ENV_NAMES = seer_env.env_names()

# PettingZoo's and Gymnasium's checkers warn about correct things: every
# observation is zero at reset, count observations are unbounded (Box high = inf).
checker_warnings = pytest.mark.filterwarnings(
    "ignore:Observation numpy array is all zeros",
    "ignore:State numpy array is all zeros",
    "ignore:Agent's maximum observation space value is infinity",
    "ignore:.*maximum value is infinity",
    "ignore:.*minimum value is -infinity",
)


def make(name: str, **overrides):
    return seer_env.make(name, **{**SMALL.get(name, {}), **overrides})


def sample_actions(env, rng: np.random.Generator) -> dict:
    """One action per live agent, from ``rng`` only (in ``agents`` order)."""
    actions = {}
    for agent in env.agents:
        space = env.action_space(agent)
        if isinstance(space, spaces.Discrete):
            actions[agent] = int(rng.integers(0, space.n))
        else:
            actions[agent] = rng.uniform(space.low, space.high).astype(space.dtype)
    return actions


def sample_array(env, rng: np.random.Generator) -> np.ndarray:
    """The same actions as :func:`sample_actions` as one row per possible agent."""
    space = env.action_space(env.possible_agents[0])
    n = len(env.possible_agents)
    if isinstance(space, spaces.Discrete):
        return rng.integers(0, space.n, size=n).astype(np.int64)
    return rng.uniform(space.low, space.high, size=(n, *space.shape)).astype(space.dtype)


def feed(h, value) -> None:
    """Hash ``value`` exactly: types, dict key order, dtypes, shapes and bytes."""
    if isinstance(value, dict):
        h.update(b"{")
        for k, v in value.items():
            feed(h, k)
            feed(h, v)
        h.update(b"}")
    elif isinstance(value, (list, tuple)):
        h.update(b"[")
        for v in value:
            feed(h, v)
        h.update(b"]")
    elif isinstance(value, np.ndarray):
        h.update(f"A{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    else:
        h.update(f"{type(value).__name__}:{value!r};".encode())


def digest(value) -> str:
    h = hashlib.sha256()
    feed(h, value)
    return h.hexdigest()


def trace(env, steps: int, *, seed=None, action_seed: int = 0, reset: bool = True) -> list[str]:
    """Digests of reset (unless ``reset=False``) and of every step's five dicts.

    Steps through episode ends with ``reset()`` (no seed), as autoreset does.
    """
    rng = np.random.default_rng(action_seed)
    out = []
    if reset:
        out.append(digest(env.reset(seed=seed)))
    for _ in range(steps):
        if not env.agents:
            out.append(digest(env.reset()))
        out.append(digest(env.step(sample_actions(env, rng))))
        out.append(digest(env.state()))
    return out
