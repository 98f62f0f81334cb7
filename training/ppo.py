"""PPO with parameter sharing over :mod:`seer_env.vector` (CleanRL style, plain torch).

The single-file PPO (``examples/ppo_vector_pcs.py`` is its command line), for
both action kinds: a categorical policy for Discrete actions (pcs) and a
diagonal Gaussian for Box actions (aircraft; sampled actions are clipped to
the Box before stepping, as Gymnasium's ``ClipAction`` does, and the loss
uses the unclipped sample). One policy is shared by every agent of every
instance: the vector env flattens agents into the batch. Masking of reset
steps and of agents that left early, and GAE that never crosses an episode
end, are described in the example's docstring.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass
class PPOConfig:
    """Hyperparameters (defaults suit pcs_v1; the budgets per task and size: ``TASKS``)."""

    num_envs: int = 4  # instances stepped together
    num_steps: int = 96  # rollout length per update
    updates: int = 30
    epochs: int = 8
    minibatches: int = 16
    lr: float = 3e-3
    gamma: float = 0.5  # TASKS uses 0.9 for pcs_v1: a guard pays after it costs (docs/tasks.md)
    gae_lambda: float = 0.8
    clip: float = 0.2
    ent_coef: float = 0.001
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 64
    torch_threads: int = 1
    env_config: dict[str, Any] = field(default_factory=dict)


def make_agent(obs_dim: int, action_space, hidden: int):
    """Actor-critic MLP: Categorical logits for Discrete, Gaussian means for Box."""
    import torch
    from gymnasium import spaces
    from torch import nn

    def layer(i, o, std=2**0.5):
        lin = nn.Linear(i, o)
        nn.init.orthogonal_(lin.weight, std)
        nn.init.constant_(lin.bias, 0.0)
        return lin

    discrete = isinstance(action_space, spaces.Discrete)
    out = int(action_space.n) if discrete else int(np.prod(action_space.shape))

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.discrete = discrete
            self.critic = nn.Sequential(
                layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                layer(hidden, 1, std=1.0),
            )  # fmt: skip
            self.actor = nn.Sequential(
                layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                layer(hidden, out, std=0.01),
            )  # fmt: skip
            if not discrete:
                self.log_std = nn.Parameter(torch.full((out,), -0.5))

        def value(self, x):
            return self.critic(x).squeeze(-1)

        def dist(self, x):
            if self.discrete:
                return torch.distributions.Categorical(logits=self.actor(x))
            mean = self.actor(x)
            return torch.distributions.Normal(mean, self.log_std.exp().expand_as(mean))

        def act(self, x, action=None):
            d = self.dist(x)
            if action is None:
                action = d.sample()
            logp, ent = d.log_prob(action), d.entropy()
            if not self.discrete:
                logp, ent = logp.sum(-1), ent.sum(-1)
            return action, logp, ent, self.value(x)

        def greedy(self, x):
            """The deterministic action: argmax or the Gaussian's mean."""
            if self.discrete:
                return self.actor(x).argmax(-1)
            return self.actor(x)

    return Agent()


def to_env_actions(action, action_space) -> np.ndarray:
    """Torch actions as the env wants them (Box: clipped, float32)."""
    a = action.numpy()
    if hasattr(action_space, "n"):
        return a.astype(np.int64)
    return np.clip(a, action_space.low, action_space.high).astype(np.float32)


def train(env_name: str, cfg: PPOConfig, seed: int, log=print) -> dict:
    """Train one shared policy; returns ``{"agent", "history", "seconds", "config"}``.

    ``history`` has one row per update: env steps so far, mean reward per
    agent-step of the rollout, the episode returns per agent finished in it,
    the last minibatch's losses and entropy, the clip fraction, and steps per
    second (env alone and overall). ``rows`` is the batch width (instances x
    agents).
    """
    import torch

    import seer_env.vector

    torch.manual_seed(seed)
    torch.set_num_threads(cfg.torch_threads)
    rng = np.random.default_rng(seed)
    envs = seer_env.vector.make(env_name, num_instances=cfg.num_envs, **cfg.env_config)
    n_rows, agents_per = envs.num_envs, envs.agents_per_instance
    obs_dim = envs.single_observation_space.shape[0]
    space = envs.single_action_space
    agent = make_agent(obs_dim, space, cfg.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.lr, eps=1e-5)
    critic_params = list(agent.critic.parameters())
    actor_params = [p for p in agent.parameters() if all(p is not c for c in critic_params)]
    act_shape = () if agent.discrete else space.shape
    T = cfg.num_steps
    obs_buf = torch.zeros((T, n_rows, obs_dim))
    act_buf = torch.zeros((T, n_rows, *act_shape), dtype=torch.long if agent.discrete else None)
    logp_buf, rew_buf, val_buf = (torch.zeros((T, n_rows)) for _ in range(3))
    term_buf, done_buf, next_val_buf = (torch.zeros((T, n_rows)) for _ in range(3))
    valid_buf = torch.zeros((T, n_rows), dtype=torch.bool)

    obs, _ = envs.reset(seed=seed)
    next_obs = torch.as_tensor(obs)
    acting = np.ones(n_rows, dtype=bool)
    episode_return = np.zeros(cfg.num_envs)
    history: list[dict] = []
    env_seconds = 0.0
    start = time.perf_counter()
    for update in range(1, cfg.updates + 1):
        finished: list[float] = []
        for t in range(T):
            resetting = np.repeat(~acting.reshape(-1, agents_per).any(axis=1), agents_per)
            obs_buf[t] = next_obs
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs)
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            valid_buf[t] = torch.as_tensor(acting & ~resetting)
            t0 = time.perf_counter()
            obs, reward, term, trunc, _ = envs.step(to_env_actions(action, space))
            env_seconds += time.perf_counter() - t0
            next_obs = torch.as_tensor(obs)
            rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32)
            term_buf[t] = torch.as_tensor(term, dtype=torch.float32)
            done_buf[t] = torch.as_tensor(term | trunc, dtype=torch.float32)
            with torch.no_grad():
                next_val_buf[t] = agent.value(next_obs)
            live = (acting & ~resetting).reshape(-1, agents_per)
            episode_return += (reward.reshape(-1, agents_per) * live).sum(axis=1) / agents_per
            acting = np.where(resetting, True, acting & ~(term | trunc))
            ended = ~acting.reshape(-1, agents_per).any(axis=1) & live.any(axis=1)
            finished += episode_return[ended].tolist()
            episode_return[ended] = 0.0

        with torch.no_grad():
            adv = torch.zeros_like(rew_buf)
            last = torch.zeros(n_rows)
            for t in reversed(range(T)):
                delta = rew_buf[t] + cfg.gamma * next_val_buf[t] * (1 - term_buf[t]) - val_buf[t]
                last = delta + cfg.gamma * cfg.gae_lambda * (1 - done_buf[t]) * last
                last = torch.where(valid_buf[t], last, torch.zeros_like(last))
                adv[t] = last
            returns = adv + val_buf

        mask = valid_buf.reshape(-1)
        b_obs = obs_buf.reshape(-1, obs_dim)[mask]
        b_act = act_buf.reshape(-1, *act_shape)[mask]
        b_logp, b_adv, b_ret = (x.reshape(-1)[mask] for x in (logp_buf, adv, returns))
        n = b_obs.shape[0]
        mb = max(1, n // cfg.minibatches)
        clipfracs = []
        for _ in range(cfg.epochs):
            order = torch.as_tensor(rng.permutation(n))
            for s in range(0, n, mb):
                idx = order[s : s + mb]
                _, new_logp, entropy, new_val = agent.act(b_obs[idx], b_act[idx])
                ratio = (new_logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8) if len(idx) > 1 else a
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
                v_loss = 0.5 * ((new_val - b_ret[idx]) ** 2).mean()
                loss = pg - cfg.ent_coef * entropy.mean() + cfg.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                # Clip actor and critic apart: the critic's gradient (returns of
                # tens) would otherwise dominate the norm and shrink the actor's.
                for part in actor_params, critic_params:
                    torch.nn.utils.clip_grad_norm_(part, cfg.max_grad_norm)
                optimizer.step()
                clipfracs.append(((ratio - 1).abs() > cfg.clip).float().mean().item())
        seconds = time.perf_counter() - start
        steps = update * T * cfg.num_envs  # env steps (every agent of an instance acts)
        row = {
            "update": update,
            "env_steps": steps,
            "mean_reward": float(rew_buf[valid_buf].mean()),
            "episode_returns": finished,
            "pg_loss": pg.item(),
            "v_loss": v_loss.item(),
            "entropy": entropy.mean().item(),
            "clipfrac": float(np.mean(clipfracs)),
            "env_sps": steps / env_seconds,
            "sps": steps / seconds,
            "seconds": seconds,
        }
        history.append(row)
        log(
            f"  {env_name} seed {seed} update {update:3d}/{cfg.updates}"
            f"  reward/agent-step {row['mean_reward']:8.4f}  v_loss {row['v_loss']:7.4f}"
            f"  entropy {row['entropy']:.3f}  env {row['env_sps']:6.0f} steps/s"
            f"  {seconds:6.0f} s"
        )
    envs.close()
    return {
        "agent": agent,
        "history": history,
        "rows": n_rows,
        "seconds": time.perf_counter() - start,
        "config": asdict(cfg),
    }
