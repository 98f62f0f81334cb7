"""Small configs of every built-in env and byte-exact traces, for the integration tests."""

from __future__ import annotations

import hashlib
import importlib

import numpy as np
import pytest
from gymnasium import spaces

import seer_env
from seer_env.envs.aircraft import AircraftEnv
from seer_env.envs.pcs import PcsEnv

# Small and quick, with something happening every step: per workload (every
# version of it runs shrunk the same way), with a version's own additions.
_SMALL_WORKLOAD = {
    PcsEnv: dict(width=4, height=4, phones_per_cell=8),
    AircraftEnv: dict(num_uavs=8, substeps=2),
}
_SMALL_VERSION = {"pcs_v0": dict(move_interval=300.0)}

# The lockstep envs: every live agent acts at every step (tests/decisions covers the others).
ENV_NAMES = seer_env.env_names(decisions=False)


def _workload(name: str) -> type:
    return importlib.import_module(f"seer_env.envs.{name}").VERSION.env_class


SMALL: dict[str, dict] = {
    name: {**_SMALL_WORKLOAD[_workload(name)], **_SMALL_VERSION.get(name, {})} for name in ENV_NAMES
}

# Envs whose agents leave early (UAVs crash), and episode lengths long enough
# to see it with random actions (they start crashing after ~20 steps).
AGENTS_DIE = {name for name in ENV_NAMES if _workload(name) is AircraftEnv}
_LONG = dict.fromkeys(AGENTS_DIE, 40)


def cycles(name: str, default: int) -> int:
    """``max_cycles`` for a test of ``name``: ``default``, longer where agents die late."""
    return max(default, _LONG.get(name, 0))


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


class DyingEnv:
    """A tiny pure-Python ParallelEnv whose agents leave one by one (no C++).

    Agent ``k`` terminates after step ``k + 1`` (``k < n - 1``); the last one is
    truncated at ``max_cycles``. Observations: ``[step, k]`` as float32.
    """

    def __new__(cls, *args, **kwargs):  # built lazily so importing envcases stays cheap
        from pettingzoo import ParallelEnv

        class _DyingEnv(ParallelEnv):
            metadata = {"name": "dying_v0", "render_modes": [], "is_parallelizable": True}

            def __init__(self, n=3, max_cycles=5):
                self.possible_agents = [f"bot_{k}" for k in range(n)]
                self.agents = []
                self.render_mode = None
                self.max_cycles = max_cycles
                obs = spaces.Box(0, 100, (2,), np.float32)
                act = spaces.Discrete(2)
                self.observation_spaces = {a: obs for a in self.possible_agents}
                self.action_spaces = {a: act for a in self.possible_agents}
                self.t = 0

            def observation_space(self, agent):
                return self.observation_spaces[agent]

            def action_space(self, agent):
                return self.action_spaces[agent]

            def _obs(self, agent):
                return np.array([self.t, int(agent.split("_")[1])], dtype=np.float32)

            def reset(self, seed=None, options=None):
                self.t = 0
                self.agents = list(self.possible_agents)
                return {a: self._obs(a) for a in self.agents}, {a: {"n": 0} for a in self.agents}

            def step(self, actions):
                if not self.agents:
                    raise RuntimeError("step() called with no live agents")
                assert set(actions) == set(self.agents), "actions for agents not live"
                self.t += 1
                live = self.agents
                last = self.possible_agents[-1]
                term = {a: a != last and int(a.split("_")[1]) + 1 == self.t for a in live}
                trunc = {a: self.t >= self.max_cycles for a in live}
                obs = {a: self._obs(a) for a in live}
                rew = {a: 1.0 for a in live}
                infos = {a: {"n": self.t} for a in live}
                self.agents = [a for a in live if not (term[a] or trunc[a])]
                return obs, rew, term, trunc, infos

        return _DyingEnv(*args, **kwargs)
