"""PPO (RLlib, new API stack) on pcs_v0: one policy shared by every cell.

    python examples/rllib_ppo_pcs.py --iterations 3 --env-runners 2
    python examples/rllib_ppo_pcs.py --env aircraft_v0 --num-uavs 8 --max-cycles 40

Every env runner is a Ray actor hosting one pcs_v0 env with its own runtime
thread pool, sized from ``--cpus-per-runner`` (see
``seer_env.integrations.rllib``). On a Ray cluster, raise ``--env-runners``
(and connect with ``ray.init(address="auto")``) to scale past one machine.
"""

from __future__ import annotations

import argparse
import time


def build_config(args: argparse.Namespace):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    env_config = {"max_cycles": args.max_cycles, "seed": args.seed}
    if args.env == "pcs_v0":
        env_config.update(width=args.width, height=args.height)
    elif args.env == "aircraft_v0":
        env_config.update(num_uavs=args.num_uavs, substeps=args.substeps)
    return (
        PPOConfig()
        .environment(args.env, env_config=env_config)
        .framework("torch")
        .env_runners(
            num_env_runners=args.env_runners,
            num_envs_per_env_runner=1,
            num_cpus_per_env_runner=args.cpus_per_runner,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=args.batch,
            minibatch_size=max(32, args.batch // 4),
            num_epochs=2,
            lr=3e-4,
        )
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32, 32]))
        .multi_agent(
            policies={"shared"},
            policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared",
        )
        .debugging(seed=args.seed, log_level="ERROR")
    )


def main(argv: list[str] | None = None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="pcs_v0")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--cpus-per-runner", type=float, default=1)
    parser.add_argument("--width", type=int, default=4)
    parser.add_argument("--height", type=int, default=4)
    parser.add_argument("--num-uavs", type=int, default=8, help="aircraft_v0 only")
    parser.add_argument("--substeps", type=int, default=4, help="aircraft_v0 only")
    parser.add_argument("--max-cycles", type=int, default=25)
    parser.add_argument("--batch", type=int, default=800, help="env steps x agents per update")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import ray

    from seer_env.integrations import rllib as seer_rllib

    ray.init(
        num_cpus=max(2, int(args.env_runners * args.cpus_per_runner) + 1),
        include_dashboard=False,
        log_to_driver=False,
        ignore_reinit_error=True,
    )
    seer_rllib.register()
    algo = build_config(args).build_algo()
    returns: list[float] = []
    try:
        for i in range(args.iterations):
            start = time.perf_counter()
            result = algo.train()
            runners = result["env_runners"]
            ret = float(runners.get("episode_return_mean", float("nan")))
            returns.append(ret)
            steps = runners.get("num_env_steps_sampled_lifetime", 0)
            print(
                f"iter {i + 1}: episode_return_mean {ret:9.3f}  "
                f"env steps {steps}  {time.perf_counter() - start:.1f} s",
                flush=True,
            )
    finally:
        algo.stop()
        ray.shutdown()
    return returns


if __name__ == "__main__":
    main()
