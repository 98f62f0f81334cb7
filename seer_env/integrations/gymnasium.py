"""Gymnasium: one env instance as a single ``gymnasium.Env`` over all its agents.

Gymnasium's own vector envs (``SyncVectorEnv``, ``AsyncVectorEnv``) and
wrappers take ``gymnasium.Env`` instances, not PettingZoo envs. ``JointEnv``
presents a seer_env ParallelEnv as one: every agent is a row.

```python
import functools
import gymnasium as gym
from seer_env.integrations.gymnasium import make_joint

fns = [functools.partial(make_joint, "pcs_v0", width=8, height=8) for _ in range(4)]
venv = gym.vector.AsyncVectorEnv(fns, context="spawn")
obs, infos = venv.reset(seed=0)  # obs: [4, 64, 10]; copy i seeded 0 + i
```

- ``observation_space``: ``Box`` of shape ``(num_agents, *agent_obs_shape)``,
  float32, the agent space repeated per row.
- ``action_space``: ``MultiDiscrete([n] * num_agents)`` for Discrete agents,
  ``Box((num_agents, dim))`` for Box agents. Steps through the env's array
  fast path (``step_arrays``).
- ``reward``: the sum of the live agents' rewards (a float, as Gymnasium
  wants); each agent's own is ``info["rewards"]``.
- ``terminated`` / ``truncated``: the episode is over when no agent is live
  (``env.agents == []``); ``terminated`` if every agent that was live in the
  last step terminated, ``truncated`` otherwise.
- ``info``: ``"alive"`` (bool per agent, live after the step),
  ``"rewards"`` (float64 per agent, 0 for agents not live during the step)
  and each of the env's integer info keys as an int64 array over agents; the
  same keys at reset and at every step.
- Rows of agents that were not live during a step (aircraft_v0 UAVs that
  crashed earlier) have zero observations, as SuperSuit's ``black_death``
  gives them.

``JointEnv`` pickles (the env pickles itself mid-episode), so it works with
``AsyncVectorEnv`` in ``fork``, ``forkserver`` and ``spawn`` contexts.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

import seer_env
from seer_env.env import SeerParallelEnv

__all__ = ["JointEnv", "make_joint"]


class JointEnv(gymnasium.Env):
    """A seer_env ParallelEnv as a ``gymnasium.Env`` with agents stacked as rows.

    Args:
        env: the ParallelEnv (a ``seer_env.SeerParallelEnv``, e.g. from ``seer_env.make``).
    """

    def __init__(self, env: SeerParallelEnv) -> None:
        if not isinstance(env, SeerParallelEnv):
            raise ValueError(f"env must be a seer_env.SeerParallelEnv, got {type(env).__name__}")
        self.env = env
        self.metadata = {
            "name": env.metadata.get("name"),
            "render_modes": list(env.metadata.get("render_modes", [])),
            # Gymnasium's env checker asks for one; the envs have no clock of their own.
            "render_fps": env.metadata.get("render_fps", 4),
        }
        self.render_mode = env.render_mode
        agents = env.possible_agents
        self._num = len(agents)
        agent_obs = env.observation_space(agents[0])
        agent_act = env.action_space(agents[0])
        rows = (self._num,) + (1,) * len(agent_obs.shape)
        self.observation_space = spaces.Box(
            np.tile(agent_obs.low[None], rows),
            np.tile(agent_obs.high[None], rows),
            dtype=agent_obs.dtype,
        )
        if isinstance(agent_act, spaces.Discrete):
            self.action_space: spaces.Space = spaces.MultiDiscrete(
                np.full(self._num, agent_act.n, dtype=np.int64)
            )
        else:
            self.action_space = spaces.Box(
                np.tile(agent_act.low[None], (self._num, 1)),
                np.tile(agent_act.high[None], (self._num, 1)),
                dtype=agent_act.dtype,
            )
        self._info_keys: list[str] = []

    @property
    def agents(self) -> list[str]:
        """The env's live agents."""
        return self.env.agents

    def _alive(self, names: list[str]) -> np.ndarray:
        alive = np.zeros(self._num, dtype=bool)
        index = self.env._agent_index
        alive[[index[a] for a in names]] = True
        return alive

    def _infos(self, alive: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        # The per-agent counters straight from the runtime (rows = possible agents,
        # columns in the env's info-key order), not through per-agent dicts.
        table = self.env.sim.infos()
        info: dict[str, np.ndarray] = {"alive": alive, "rewards": rewards}
        for j, key in enumerate(self._info_keys):
            info[key] = table[:, j].astype(np.int64)
        return info

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Reset the env (``seed`` reseeds it); returns ``(obs[num_agents, ...], info)``."""
        super().reset(seed=seed)
        obs, infos = self.env.reset(seed=seed, options=options)
        first = self.env.possible_agents[0]
        self._info_keys = list(infos[first])
        stacked = np.stack([obs[a] for a in self.env.possible_agents])
        alive = self._alive(self.env.agents)
        return stacked, self._infos(alive, np.zeros(self._num, dtype=np.float64))

    def step(self, action: np.ndarray):
        """One step of every live agent; rows of agents no longer live are ignored."""
        before = self._alive(self.env.agents)
        obs, rewards, terms, truncs = self.env.step_arrays(np.asarray(action))
        rewards = np.where(before, rewards, 0.0)
        obs[~before] = 0
        after = self._alive(self.env.agents)
        over = not after.any()
        terminated = bool(over and terms[before].all())
        truncated = bool(over and not terminated)
        reward = float(rewards.sum())
        return obs, reward, terminated, truncated, self._infos(after, rewards)

    def render(self):
        """The env's ``render()``."""
        return self.env.render()

    def close(self) -> None:
        """Close the env."""
        self.env.close()


def make_joint(name: str, **config: Any) -> JointEnv:
    """``JointEnv(seer_env.make(name, **config))``: picklable with ``functools.partial``."""
    return JointEnv(seer_env.make(name, **config))
