"""TorchRL on pcs_v0: check the specs, then collect rollouts with a shared policy.

    python examples/torchrl_pcs.py --steps 100 --batches 2

Every cell is one row of the ``"cell"`` group; one small MLP (parameters
shared by all cells) maps each cell's observation to logits over its guard
count, and a ``Collector`` gathers ``frames_per_batch`` env steps at a
time (an env step = every cell acting once).
"""

from __future__ import annotations

import argparse
import time


def build(args: argparse.Namespace):
    import torch
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.modules import ProbabilisticActor

    from seer_env.integrations.torchrl import make_env

    env = make_env(
        "pcs_v0",
        width=args.width,
        height=args.height,
        max_cycles=args.max_cycles,
        seed=args.seed,
        executor=args.executor,
        num_threads=args.threads,
    )
    group = next(iter(env.group_map))
    obs_dim = env.observation_spec[group, "observation"].shape[-1]
    n_actions = env.full_action_spec[group, "action"].space.n
    net = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
    module = TensorDictModule(net, in_keys=[(group, "observation")], out_keys=[(group, "logits")])
    policy = ProbabilisticActor(
        module,
        in_keys={"logits": (group, "logits")},
        out_keys=[(group, "action")],
        distribution_class=torch.distributions.Categorical,
        return_log_prob=False,
    )
    return env, group, policy


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--height", type=int, default=8)
    parser.add_argument("--max-cycles", type=int, default=50)
    parser.add_argument("--steps", type=int, default=100, help="env steps per batch")
    parser.add_argument("--batches", type=int, default=2)
    parser.add_argument("--executor", default="serial")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import torch
    from torchrl.collectors import Collector  # TorchRL >= 0.14 (SyncDataCollector before)
    from torchrl.envs.utils import check_env_specs

    torch.manual_seed(args.seed)
    env, group, policy = build(args)
    check_env_specs(env, seed=args.seed)
    print(f"specs ok: group {group!r} with {len(env.group_map[group])} agents")

    start = time.perf_counter()
    rollout = env.rollout(args.steps, policy=policy, break_when_any_done=False)
    seconds = time.perf_counter() - start
    reward = rollout["next", group, "reward"]
    print(
        f"rollout: {tuple(rollout.batch_size)} steps, "
        f"obs {tuple(rollout[group, 'observation'].shape)}, "
        f"mean reward per cell-step {reward.mean().item():.4f}, {args.steps / seconds:.0f} steps/s"
    )

    collector = Collector(
        env,
        policy,
        frames_per_batch=args.steps,
        total_frames=args.steps * args.batches,
        auto_register_policy_transforms=False,  # the policy keeps no recurrent state
    )
    rewards = []
    for i, batch in enumerate(collector):
        r = batch["next", group, "reward"].mean().item()
        rewards.append(r)
        print(f"batch {i + 1}: {tuple(batch.batch_size)} frames, mean reward {r:.4f}")
    collector.shutdown()
    return {"rollout": rollout, "batch_rewards": rewards}


if __name__ == "__main__":
    main()
