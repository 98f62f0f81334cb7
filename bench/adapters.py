"""The reference envs in the shapes the user-facing vectorizers take.

Gymnasium's ``AsyncVectorEnv`` takes single ``gymnasium.Env`` s; a MARL user
puts a multi-agent env behind one by stacking every agent's observation and
action into arrays (``JointArrayEnv``). SuperSuit takes a PettingZoo
``ParallelEnv``: ``PcsReference`` is one already; ``AircraftReferenceEnv``
wraps the NumPy aircraft reference, which steps arrays, in the dict API.

Every adapter runs the reference model exactly; what it adds is the per-step
conversion cost a user of that interface pays too.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from seer_env.testing.reference.aircraft import INFO_KEYS, AircraftReference
from seer_env.testing.reference.pcs import PcsReference

NEVER = 10**9  # max_cycles of benchmark episodes: they never truncate


class PcsJoint:
    """PcsReference stepped with arrays: int guards[N] in, obs[N, 10] and rewards[N] out."""

    def __init__(self, **config) -> None:
        self.env = PcsReference(max_cycles=NEVER, **config)
        self.agents = list(self.env.possible_agents)
        space = self.env.action_space(self.agents[0])
        self.observation_space = spaces.Box(-np.inf, np.inf, (len(self.agents), 10), np.float32)
        self.action_space = spaces.MultiDiscrete(np.full(len(self.agents), space.n))

    def reset(self, seed: int | None) -> np.ndarray:
        """Observations of every cell."""
        obs, _ = self.env.reset(seed=seed)
        return np.stack([obs[a] for a in self.agents])

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step; the dicts are what PcsReference's ParallelEnv API wants."""
        obs, rewards, *_ = self.env.step(dict(zip(self.agents, np.asarray(actions).tolist())))
        return np.stack([obs[a] for a in self.agents]), np.fromiter(rewards.values(), float)

    def events(self) -> int:
        """Events handled since reset."""
        return self.env.stats()["events"]


class AircraftJoint:
    """AircraftReference: float32 commands[N, 4] in, obs[N, d] and rewards[N] out."""

    def __init__(self, **config) -> None:
        self.ref = AircraftReference(**config)
        n = self.ref.p.num_uavs
        obs_dim = 17 + 6 * self.ref.p.k_neighbors
        self.observation_space = spaces.Box(-np.inf, np.inf, (n, obs_dim), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (n, 4), np.float32)

    def reset(self, seed: int | None) -> np.ndarray:
        """Observations of every UAV."""
        self.ref.reset(0 if seed is None else seed)
        return self.ref.observations()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step of every UAV still flying."""
        self.ref.step(np.asarray(actions, dtype=np.float32))  # dead UAVs ignore theirs
        return self.ref.observations(), self.ref.rewards()


class JointArrayEnv(gymnasium.Env):
    """A multi-agent reference behind the single-agent Gymnasium API: arrays of all agents."""

    metadata: dict = {"render_modes": []}

    def __init__(self, make: Callable[[], PcsJoint | AircraftJoint]) -> None:
        self.joint = make()
        self.observation_space = self.joint.observation_space
        self.action_space = self.joint.action_space

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Gymnasium reset: ``(obs[N, ...], {})``."""
        super().reset(seed=seed)
        return self.joint.reset(seed), {}

    def step(self, actions):
        """Gymnasium step; the reward is the team's sum."""
        obs, rewards = self.joint.step(actions)
        return obs, float(rewards.sum()), False, False, {}


class AircraftReferenceEnv(ParallelEnv):
    """The NumPy aircraft reference as a PettingZoo ParallelEnv (agents ``uav_<i>``)."""

    metadata = {"name": "aircraft_reference_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, **config) -> None:
        self.render_mode = None
        self.joint = AircraftJoint(**config)
        n = self.joint.ref.p.num_uavs
        self.possible_agents = [f"uav_{i}" for i in range(n)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self.agents: list[str] = []
        obs_dim = self.joint.observation_space.shape[1]
        obs_space = spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        act_space = spaces.Box(-1.0, 1.0, (4,), np.float32)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}

    def observation_space(self, agent: str) -> spaces.Space:
        """One shared Box."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """One shared Box."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        """``(obs, infos)`` dicts of every UAV."""
        obs = self.joint.reset(seed)
        self.agents = list(self.possible_agents)
        return dict(zip(self.agents, obs)), {a: {} for a in self.agents}

    def step(self, actions: dict):
        """Dicts in, dicts out, as the PettingZoo API asks; dead UAVs leave ``agents``."""
        index = self._index
        arr = np.zeros((len(self.possible_agents), 4), dtype=np.float32)
        for agent, action in actions.items():
            arr[index[agent]] = action
        obs, rewards = self.joint.step(arr)
        done = self.joint.ref.terminations()
        infos = self.joint.ref.infos()
        live = self.agents
        rows = [index[a] for a in live]
        out = (
            {a: obs[i] for a, i in zip(live, rows)},
            {a: float(rewards[i]) for a, i in zip(live, rows)},
            {a: bool(done[i]) for a, i in zip(live, rows)},
            {a: False for a in live},
            {a: dict(zip(INFO_KEYS, infos[i].tolist())) for a, i in zip(live, rows)},
        )
        self.agents = [a for a, i in zip(live, rows) if not done[i]]
        return out
