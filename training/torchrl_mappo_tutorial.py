"""TorchRL's multi-agent PPO tutorial on the batched env, and its learning curve.

    python -m training.torchrl_mappo_tutorial --env pcs_v1 --iterations 20 --seeds 1 2
    python -m training.torchrl_mappo_tutorial --env aircraft_v1 --iterations 20 --seeds 1 2

``run_tutorial`` is the code of TorchRL's "Multi-Agent Reinforcement Learning
(PPO)" tutorial (``tutorials/sphinx-tutorials/multiagent_ppo.py``, a
``VmasEnv`` there), statement by statement, with its sizes as arguments.
What differs for seer_env (docs/integrations.md shows it as a diff):

- the env construction;
- a Discrete action (pcs_v1): a Categorical head over ``n`` logits in place
  of the tutorial's TanhNormal (which needs a Box);
- ``seer_diff=True``: the two statements that copy the root ``done`` and
  ``terminated`` to every agent are left out (the env reports each agent's
  own end; the statements would drop a UAV's crash), and
  ``loss_module.loss_mask_key = ("agents", "mask")`` keeps the rows of
  agents that are gone out of the loss. ``seer_diff=False`` runs the
  tutorial's lines as written.

The command line writes ``<env>_tutorial.json`` (each iteration's logged
``episode_reward_mean`` per seed) and ``<env>_tutorial.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# Small configurations: each collected batch holds whole episodes, so that
# the tutorial's log (a mean over the batch's done rows) has rows to average.
CONFIGS: dict[str, dict[str, Any]] = {
    # 8x8 cells, 96 hourly steps: one episode per instance and batch.
    "pcs_v1": dict(
        env=dict(width=8, height=8),
        num_envs=2,
        frames_per_batch=2 * 96,
        num_epochs=4,
        minibatch_size=48,
        num_cells=64,
        lr=3e-3,
        gamma=0.9,
    ),
    # 4 UAVs, 60 steps of 0.1 s: two episodes per instance and batch.
    "aircraft_v1": dict(
        env=dict(num_uavs=4, max_cycles=60),
        num_envs=8,
        frames_per_batch=8 * 120,
        num_epochs=10,
        minibatch_size=120,
        num_cells=64,
        lr=3e-4,
        gamma=0.99,
    ),
}


def make_env(name: str, num_envs: int, seed: int, **config: Any):
    """The tutorial's ``VmasEnv(...)``, swapped: the batched seer_env env."""
    from seer_env.integrations.torchrl import make_batched_env

    return make_batched_env(name, num_envs=num_envs, seed=seed, **config)


def run_tutorial(
    env,
    *,
    n_iters: int,
    frames_per_batch: int,
    num_epochs: int = 30,
    minibatch_size: int = 400,
    lr: float = 3e-4,
    gamma: float = 0.99,
    lmbda: float = 0.9,
    num_cells: int = 256,
    seer_diff: bool = True,
    head: str = "auto",
    on_batch: Callable[[Any, float, Any], None] | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> list[float]:
    """The tutorial from its env on; returns each iteration's ``episode_reward_mean``.

    ``head``: ``"auto"`` (TanhNormal for a Box action, Categorical for a
    Discrete one), ``"tanh_normal"`` (the tutorial's) or ``"categorical"``.
    ``on_batch(tensordict_data, episode_reward_mean, loss_module)`` sees every
    iteration's batch after its update (for tests).
    """
    import torch
    from tensordict.nn import TensorDictModule, set_composite_lp_aggregate
    from tensordict.nn.distributions import NormalParamExtractor
    from torchrl.collectors import Collector
    from torchrl.data.replay_buffers import ReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.data.replay_buffers.storages import LazyTensorStorage
    from torchrl.envs import RewardSum, TransformedEnv
    from torchrl.envs.utils import check_env_specs
    from torchrl.modules import MultiAgentMLP, ProbabilisticActor, TanhNormal
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    device = torch.device("cpu")
    vmas_device = device
    total_frames = frames_per_batch * n_iters
    max_grad_norm = 1.0
    clip_epsilon = 0.2
    entropy_eps = 1e-4
    if head == "auto":
        discrete = hasattr(env.full_action_spec_unbatched[env.action_key].space, "n")
        head = "categorical" if discrete else "tanh_normal"

    # The tutorial sets this globally (``.set()``); here it holds for the run only.
    with set_composite_lp_aggregate(False):
        log(f"action_keys: {env.action_keys}")
        log(f"reward_keys: {env.reward_keys}")
        log(f"done_keys: {env.done_keys}")
        env = TransformedEnv(
            env,
            RewardSum(in_keys=[env.reward_key], out_keys=[("agents", "episode_reward")]),
        )
        check_env_specs(env)

        share_parameters_policy = True
        if head == "tanh_normal":  # the tutorial's policy, as written
            policy_net = torch.nn.Sequential(
                MultiAgentMLP(
                    n_agent_inputs=env.observation_spec["agents", "observation"].shape[-1],
                    n_agent_outputs=2 * env.full_action_spec[env.action_key].shape[-1],
                    n_agents=env.n_agents,
                    centralised=False,
                    share_params=share_parameters_policy,
                    device=device,
                    depth=2,
                    num_cells=num_cells,
                    activation_class=torch.nn.Tanh,
                ),
                NormalParamExtractor(),
            )
            policy_module = TensorDictModule(
                policy_net,
                in_keys=[("agents", "observation")],
                out_keys=[("agents", "loc"), ("agents", "scale")],
            )
            policy = ProbabilisticActor(
                module=policy_module,
                spec=env.action_spec_unbatched,
                in_keys=[("agents", "loc"), ("agents", "scale")],
                out_keys=[env.action_key],
                distribution_class=TanhNormal,
                distribution_kwargs={
                    "low": env.full_action_spec_unbatched[env.action_key].space.low,
                    "high": env.full_action_spec_unbatched[env.action_key].space.high,
                },
                return_log_prob=True,
            )
        else:  # the Discrete diff: n logits per agent, a Categorical head
            policy_net = MultiAgentMLP(
                n_agent_inputs=env.observation_spec["agents", "observation"].shape[-1],
                n_agent_outputs=env.full_action_spec[env.action_key].space.n,
                n_agents=env.n_agents,
                centralised=False,
                share_params=share_parameters_policy,
                device=device,
                depth=2,
                num_cells=num_cells,
                activation_class=torch.nn.Tanh,
            )
            policy_module = TensorDictModule(
                policy_net,
                in_keys=[("agents", "observation")],
                out_keys=[("agents", "logits")],
            )
            policy = ProbabilisticActor(
                module=policy_module,
                spec=env.action_spec_unbatched,
                in_keys=[("agents", "logits")],
                out_keys=[env.action_key],
                distribution_class=torch.distributions.Categorical,
                return_log_prob=True,
            )

        share_parameters_critic = True
        mappo = True
        critic_net = MultiAgentMLP(
            n_agent_inputs=env.observation_spec["agents", "observation"].shape[-1],
            n_agent_outputs=1,
            n_agents=env.n_agents,
            centralised=mappo,
            share_params=share_parameters_critic,
            device=device,
            depth=2,
            num_cells=num_cells,
            activation_class=torch.nn.Tanh,
        )
        critic = TensorDictModule(
            module=critic_net,
            in_keys=[("agents", "observation")],
            out_keys=[("agents", "state_value")],
        )

        collector = Collector(
            env,
            policy,
            device=vmas_device,
            storing_device=device,
            frames_per_batch=frames_per_batch,
            total_frames=total_frames,
        )
        replay_buffer = ReplayBuffer(
            storage=LazyTensorStorage(frames_per_batch, device=device),
            sampler=SamplerWithoutReplacement(),
            batch_size=minibatch_size,
        )
        loss_module = ClipPPOLoss(
            actor_network=policy,
            critic_network=critic,
            clip_epsilon=clip_epsilon,
            entropy_coeff=entropy_eps,
            normalize_advantage=False,
        )
        loss_module.set_keys(
            reward=env.reward_key,
            action=env.action_key,
            value=("agents", "state_value"),
            done=("agents", "done"),
            terminated=("agents", "terminated"),
        )
        if seer_diff:  # rows of agents that are gone stay out of the loss
            loss_module.loss_mask_key = ("agents", "mask")
        loss_module.make_value_estimator(ValueEstimators.GAE, gamma=gamma, lmbda=lmbda)
        GAE = loss_module.value_estimator
        optim = torch.optim.Adam(loss_module.parameters(), lr)

        episode_reward_mean_list = []
        for tensordict_data in collector:
            if not seer_diff:  # the tutorial's VMAS lines: the root flags to every agent
                tensordict_data.set(
                    ("next", "agents", "done"),
                    tensordict_data.get(("next", "done"))
                    .unsqueeze(-1)
                    .expand(tensordict_data.get_item_shape(("next", env.reward_key))),
                )
                tensordict_data.set(
                    ("next", "agents", "terminated"),
                    tensordict_data.get(("next", "terminated"))
                    .unsqueeze(-1)
                    .expand(tensordict_data.get_item_shape(("next", env.reward_key))),
                )
            with torch.no_grad():
                GAE(
                    tensordict_data,
                    params=loss_module.critic_network_params,
                    target_params=loss_module.target_critic_network_params,
                )
            data_view = tensordict_data.reshape(-1)
            replay_buffer.extend(data_view)
            for _ in range(num_epochs):
                for _ in range(frames_per_batch // minibatch_size):
                    subdata = replay_buffer.sample()
                    loss_vals = loss_module(subdata)
                    loss_value = (
                        loss_vals["loss_objective"]
                        + loss_vals["loss_critic"]
                        + loss_vals["loss_entropy"]
                    )
                    loss_value.backward()
                    torch.nn.utils.clip_grad_norm_(loss_module.parameters(), max_grad_norm)
                    optim.step()
                    optim.zero_grad()
            collector.update_policy_weights_()

            done = tensordict_data.get(("next", "agents", "done"))
            episode_reward_mean = (
                tensordict_data.get(("next", "agents", "episode_reward"))[done].mean().item()
            )
            episode_reward_mean_list.append(episode_reward_mean)
            log(f"episode_reward_mean = {episode_reward_mean}")
            if on_batch is not None:
                on_batch(tensordict_data, episode_reward_mean, loss_module)
        collector.shutdown()
    return episode_reward_mean_list


def train(name: str, iterations: int, seed: int, log=print) -> dict:
    """One seed of the tutorial on ``name``'s small configuration: its curve and seconds."""
    import torch

    cfg = CONFIGS[name]
    torch.manual_seed(seed)
    env = make_env(name, cfg["num_envs"], seed, num_threads=1, **cfg["env"])
    started = time.perf_counter()
    curve = run_tutorial(
        env,
        n_iters=iterations,
        frames_per_batch=cfg["frames_per_batch"],
        num_epochs=cfg["num_epochs"],
        minibatch_size=cfg["minibatch_size"],
        num_cells=cfg["num_cells"],
        lr=cfg["lr"],
        gamma=cfg["gamma"],
        log=lambda line: log(f"  {name} seed {seed}: {line}") if "episode" in line else None,
    )
    env.close()
    return {"seed": seed, "curve": curve, "seconds": time.perf_counter() - started}


def plot(result: dict, path: Path) -> None:
    """Each seed's logged ``episode_reward_mean`` against the iteration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for run in result["runs"]:
        ax.plot(range(1, len(run["curve"]) + 1), run["curve"], label=f"seed {run['seed']}")
    ax.set_xlabel("training iteration")
    ax.set_ylabel("episode_reward_mean (per agent)")
    ax.set_title(
        f"TorchRL's multi-agent PPO tutorial: {result['env']}\n({result['size']})", fontsize=10
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    """Train each seed, write the JSON and the PNG, print first and last iterations."""
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", choices=sorted(CONFIGS), required=True)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--seeds", type=int, nargs="+", default=[1])
    p.add_argument("--out", type=Path, default=Path("docs/img/tasks"))
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    cfg = CONFIGS[args.env]
    size = ", ".join(f"{k}={v}" for k, v in cfg["env"].items())
    result = {
        "env": args.env,
        "size": size,
        "config": cfg,
        "iterations": args.iterations,
        "command": "python -m training.torchrl_mappo_tutorial " + " ".join(argv),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "runs": [train(args.env, args.iterations, seed) for seed in args.seeds],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"{args.env}_tutorial"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    plot(result, stem.with_suffix(".png"))
    for run in result["runs"]:
        c = run["curve"]
        print(
            f"{args.env} seed {run['seed']}: iteration 1 {c[0]:.2f}, "
            f"iteration {len(c)} {c[-1]:.2f} ({run['seconds']:.0f} s)"
        )
    return result


if __name__ == "__main__":
    main()
