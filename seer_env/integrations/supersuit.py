"""SuperSuit: a black-death wrapper for envs whose agents terminate early.

SuperSuit's ``pettingzoo_env_to_vec_env_v1`` needs ``agents ==
possible_agents`` on every step but the last. pcs_v0 satisfies that as it is;
aircraft_v0 (UAVs crash) needs a black-death wrapper:

```python
import supersuit as ss
from seer_env.integrations.supersuit import black_death

env = black_death(seer_env.make("aircraft_v0", num_uavs=64))
venv = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), 4, num_cpus=2,
                             base_class="gymnasium")
```

Why not SuperSuit's own ``black_death_v3``: in SuperSuit 3.11 it ends the
episode only when every agent is *both* terminated and truncated in the same
step and reports one flag for both, so with our envs (an agent is terminated
*or* truncated) the episode never ends and the next step fails with no live
agent. This wrapper needs no SuperSuit import.

Semantics (the same as ``seer_env.vector`` for early-terminated agents):

- every step returns all ``possible_agents``;
- an agent that is no longer live gets a zero observation, reward ``0.0``,
  info counters of 0 (the env's keys) and neither flag;
- live agents get exactly what the env returns, termination and truncation
  kept apart;
- the episode ends in the step after which no agent is live; that step also
  marks every earlier-terminated agent ``terminated`` (they did), so the
  vector wrapper sees every agent done and resets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

__all__ = ["BlackDeath", "black_death"]


class BlackDeath(BaseParallelWrapper):
    """Keep every possible agent in every step (see the module docstring).

    Args:
        env: a ParallelEnv with Box observation spaces.
    """

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        for agent in env.possible_agents:
            if not isinstance(env.observation_space(agent), spaces.Box):
                raise ValueError(
                    f"env must have Box observation spaces, got "
                    f"{env.observation_space(agent)} for {agent}"
                )
        self.possible_agents = list(env.possible_agents)
        self.observation_spaces = {a: env.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: env.action_space(a) for a in self.possible_agents}
        self.metadata = env.metadata
        self.render_mode = getattr(env, "render_mode", None)
        self.agents: list[str] = []
        self._zero_info: dict[str, Any] = {}

    def observation_space(self, agent: str) -> spaces.Space:
        """The env's observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The env's action space of ``agent``."""
        return self.action_spaces[agent]

    def _zero_obs(self, agent: str) -> np.ndarray:
        space = self.observation_spaces[agent]
        return np.zeros(space.shape, dtype=space.dtype)

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Reset the env; every possible agent is live after a reset."""
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        first = next(iter(infos.values()), {})
        self._zero_info = {k: type(v)(0) for k, v in first.items()}
        obs = {a: obs[a] if a in obs else self._zero_obs(a) for a in self.agents}
        infos = {a: infos[a] if a in infos else dict(self._zero_info) for a in self.agents}
        return obs, infos

    def step(self, actions: dict):
        """Step the live agents; rows of the others as described in the module docstring."""
        live = self.env.agents
        obs, rews, terms, truncs, infos = self.env.step({a: actions[a] for a in live})
        over = not self.env.agents
        out_obs, out_rews, out_terms, out_truncs, out_infos = {}, {}, {}, {}, {}
        for a in self.agents:
            if a in obs:
                out_obs[a], out_rews[a] = obs[a], rews[a]
                out_terms[a], out_truncs[a], out_infos[a] = terms[a], truncs[a], infos[a]
            else:
                out_obs[a], out_rews[a] = self._zero_obs(a), 0.0
                out_terms[a], out_truncs[a] = over, False
                out_infos[a] = dict(self._zero_info)
        if over:
            self.agents = []
        return out_obs, out_rews, out_terms, out_truncs, out_infos


def black_death(env: ParallelEnv) -> BlackDeath:
    """Wrap ``env`` in :class:`BlackDeath`."""
    return BlackDeath(env)
