"""IPPO with TorchRL on the batched env: the library route of the baselines.

TorchRL's multi-agent PPO recipe (its "Multi-Agent Reinforcement Learning
(PPO)" tutorial) on ``SeerBatchedEnv``: one ``MultiAgentMLP`` policy
(Categorical logits for a Discrete action, the tutorial's TanhNormal for a
Box) and one critic, parameters shared by every agent and
each agent seeing only its own observation (IPPO), a ``Collector``, GAE over
the group's per-agent done flags and ``ClipPPOLoss`` over the rows where an
agent acted (``loss_mask_key``). Its budget is counted
as :mod:`training.ppo`'s (env steps = updates x num_steps x num_envs), so
the two trainers compare at the same samples.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np


@dataclass
class IPPOConfig:
    """The recipe's hyperparameters (the tutorial's names), scaled to the task."""

    num_envs: int = 2
    num_steps: int = 48  # env steps per instance and update
    updates: int = 200
    epochs: int = 8
    minibatches: int = 4
    lr: float = 3e-3
    gamma: float = 0.9
    lmbda: float = 0.8
    clip_epsilon: float = 0.2
    entropy_eps: float = 1e-3
    max_grad_norm: float = 0.5
    hidden: int = 64
    env_config: dict = field(default_factory=dict)


class GreedyPolicy:
    """A trained IPPO policy for :func:`training.evaluate.episode_returns`, acting greedily.

    Discrete: the argmax of the logits. Box: the TanhNormal's location mapped
    into the Box (its mode for a peaked distribution).
    """

    name = "TorchRL IPPO (greedy)"

    def __init__(self, net, low=None, high=None) -> None:
        self.net, self.low, self.high = net, low, high

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """One action row per agent row of ``obs``."""
        import torch

        with torch.no_grad():
            out = self.net(torch.as_tensor(obs))
            if self.low is None:
                return out.argmax(-1).numpy().astype(np.int64)
            loc = out[..., : out.shape[-1] // 2]
            action = self.low + (self.high - self.low) * (torch.tanh(loc) + 1) / 2
            return action.numpy().astype(np.float32)


def train(task: str, cfg: IPPOConfig, seed: int, log=print) -> dict:
    """Train on ``task``; returns its ``GreedyPolicy``, the learning curve and the seconds."""
    import torch
    from tensordict.nn import TensorDictModule
    from torchrl.collectors import Collector
    from torchrl.data.replay_buffers import ReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.data.replay_buffers.storages import LazyTensorStorage
    from torchrl.modules import MultiAgentMLP, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    from seer_env.integrations.torchrl import make_batched_env

    torch.manual_seed(seed)
    env = make_batched_env(task, cfg.num_envs, seed=seed, **cfg.env_config)
    group = env.group
    n_obs = env.observation_spec[group, "observation"].shape[-1]

    def mlp(outputs: int):
        return MultiAgentMLP(
            n_agent_inputs=n_obs,
            n_agent_outputs=outputs,
            n_agents=env.n_agents,
            centralized=False,
            share_params=True,
            depth=2,
            num_cells=cfg.hidden,
            activation_class=torch.nn.Tanh,
        )

    spec = env.full_action_spec_unbatched[group, "action"]
    discrete = hasattr(spec.space, "n")
    if discrete:
        policy_net = mlp(int(spec.space.n))
        head, keys, extra = policy_net, {"logits": (group, "logits")}, {}
        distribution = torch.distributions.Categorical
        low = high = None
    else:
        from tensordict.nn.distributions import NormalParamExtractor
        from torchrl.modules import TanhNormal

        policy_net = mlp(2 * spec.shape[-1])
        head = torch.nn.Sequential(policy_net, NormalParamExtractor())
        keys = {"loc": (group, "loc"), "scale": (group, "scale")}
        low, high = spec.space.low, spec.space.high
        extra = {"distribution_kwargs": {"low": low, "high": high}}
        distribution = TanhNormal
    policy = ProbabilisticActor(
        module=TensorDictModule(
            head, in_keys=[(group, "observation")], out_keys=list(keys.values())
        ),
        spec=spec,
        in_keys=keys,
        out_keys=[(group, "action")],
        distribution_class=distribution,
        return_log_prob=True,
        log_prob_key=(group, "sample_log_prob"),
        **extra,
    )
    critic = TensorDictModule(
        mlp(1), in_keys=[(group, "observation")], out_keys=[(group, "state_value")]
    )
    frames = cfg.num_envs * cfg.num_steps
    collector = Collector(env, policy, frames_per_batch=frames, total_frames=frames * cfg.updates)
    samples = frames  # one row per instance and step; its agents ride along
    buffer = ReplayBuffer(
        storage=LazyTensorStorage(samples),
        sampler=SamplerWithoutReplacement(),
        batch_size=max(1, samples // cfg.minibatches),
    )
    loss = ClipPPOLoss(
        actor_network=policy,
        critic_network=critic,
        clip_epsilon=cfg.clip_epsilon,
        entropy_coeff=cfg.entropy_eps,
        normalize_advantage=True,
    )
    loss.set_keys(
        reward=(group, "reward"),
        action=(group, "action"),
        sample_log_prob=(group, "sample_log_prob"),
        value=(group, "state_value"),
        done=(group, "done"),
        terminated=(group, "terminated"),
    )
    # Rows of agents that are gone (crashed UAVs) hold no step: out of the loss.
    loss.loss_mask_key = (group, "mask")
    loss.make_value_estimator(ValueEstimators.GAE, gamma=cfg.gamma, lmbda=cfg.lmbda)
    optim = torch.optim.Adam(loss.parameters(), cfg.lr)

    started = time.perf_counter()
    history = []
    env_steps = 0
    for batch in collector:
        env_steps += frames
        with torch.no_grad():
            loss.value_estimator(
                batch,
                params=loss.critic_network_params,
                target_params=loss.target_critic_network_params,
            )
        buffer.extend(batch.reshape(-1))
        for _ in range(cfg.epochs):
            for _ in range(cfg.minibatches):
                with warnings.catch_warnings():
                    # Advantages are normalized over the minibatch's agents too, on
                    # purpose: every agent shares the policy (PPO's flattened batch).
                    warnings.filterwarnings("ignore", "You requested advantage normalization")
                    parts = loss(buffer.sample())
                total = parts["loss_objective"] + parts["loss_critic"] + parts["loss_entropy"]
                optim.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), cfg.max_grad_norm)
                optim.step()
        collector.update_policy_weights_()
        mean_reward = float(batch.get(("next", group, "reward")).mean())
        history.append({"env_steps": env_steps, "mean_reward": mean_reward})
    collector.shutdown()
    env.close()
    seconds = time.perf_counter() - started
    log(f"  {task} TorchRL IPPO seed {seed}: {env_steps:,} env steps in {seconds:.0f} s")
    return {
        "policy": GreedyPolicy(policy_net, low, high),
        "history": history,
        "seconds": seconds,
    }
