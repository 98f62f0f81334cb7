"""Score a policy: mean episode return per agent over seeded episodes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import seer_env


def episode_returns(
    env_name: str, config: dict, make_policy: Callable, seeds: list[int]
) -> list[float]:
    """One return per seed: the episode's rewards summed over steps, averaged over agents.

    ``make_policy(env, seed)`` builds the policy for one episode. Rows of
    agents that already left (aircraft) are not counted.
    """
    out = []
    for seed in seeds:
        env = seer_env.make(env_name, **config)
        policy = make_policy(env, seed)
        env.reset(seed=seed)
        obs = env.sim.observations()
        n = len(env.possible_agents)
        total = np.zeros(n)
        while env.agents:
            live = np.zeros(n, dtype=bool)
            live[[env._agent_index[a] for a in env.agents]] = True
            obs, rewards, _, _ = env.step_arrays(policy(obs))
            total += np.where(live, rewards, 0.0)
        out.append(float(total.mean()))
    return out


class TorchPolicy:
    """A trained agent of :mod:`training.ppo`: greedy, or sampling from a seed."""

    def __init__(self, agent, action_space, greedy: bool = True, seed: int = 0) -> None:
        import torch

        self.agent, self.space, self.greedy = agent, action_space, greedy
        self.generator = torch.Generator().manual_seed(seed)
        self.name = "PPO (greedy)" if greedy else "PPO (sampled)"

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """One action row per agent for the observations ``obs``."""
        import torch

        from training.ppo import to_env_actions

        with torch.no_grad():
            x = torch.as_tensor(obs)
            if self.greedy:
                return to_env_actions(self.agent.greedy(x), self.space)
            dist = self.agent.dist(x)
            if self.agent.discrete:
                probs = dist.probs.reshape(-1, dist.probs.shape[-1])
                action = torch.multinomial(probs, 1, generator=self.generator).squeeze(-1)
            else:
                noise = torch.randn(dist.mean.shape, generator=self.generator)
                action = dist.mean + dist.stddev * noise
            return to_env_actions(action, self.space)
