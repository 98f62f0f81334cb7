"""PPO (RLlib, new API stack) on pcs_v0: one policy shared by every cell.

    python examples/rllib_ppo_pcs.py                       # 2 runners, ~2 s per iteration
    python examples/rllib_ppo_pcs.py --env-runners 0       # sample in the driver
    python examples/rllib_ppo_pcs.py --env aircraft_v0 --num-uavs 8 --max-cycles 40
    python examples/rllib_ppo_pcs.py --env pcs_admission_v0   # cells act when calls arrive
    python examples/rllib_ppo_pcs.py --address auto --env-runners 8   # on a Ray cluster

Batches count **agent steps** here (``count_steps_by="agent_steps"``): one
env step of a 4x4 grid is 16 agent steps, and ``--batch 2048`` is 2048
agent-step rows per update (128 env steps). ``--count-steps-by env_steps``
gives RLlib's default, where ``--batch`` counts env steps and an update holds
``batch x agents`` rows (``--batch 3200`` on 64 cells: 204,800 rows, minutes
per iteration on 2 CPUs).

Every env runner is a Ray actor hosting one env with its own runtime thread
pool; STPA sizes it within the ``--cpus-per-runner`` CPUs Ray reserved for
the runner (see ``seer_env.integrations.rllib`` and docs/scaling.md). Torch
gets ``--torch-threads`` threads (default 1) in the driver and in every
runner: its defaults (a thread per core in the driver, the CPU grant in a
runner) compete with the env's pool, and on a busy machine made sampling 5x
slower. Each
iteration prints the agent steps sampled and its throughput (sampling and
update; ``examples/rllib_sampling_throughput.py`` times sampling alone).
"""

from __future__ import annotations

import argparse
import time


def build_config(args: argparse.Namespace):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    env_config = {"max_cycles": args.max_cycles, "seed": args.seed}
    if args.env.startswith("pcs"):  # every pcs version has a width x height grid
        env_config.update(width=args.width, height=args.height)
    elif args.env.startswith("aircraft"):
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
            minibatch_size=args.minibatch,
            num_epochs=2,
            lr=3e-4,
        )
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32, 32]))
        .multi_agent(
            policies={"shared"},
            policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared",
            count_steps_by=args.count_steps_by,
        )
        .debugging(seed=args.seed, log_level="ERROR")
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse and check the arguments; ``--minibatch`` defaults to a quarter of ``--batch``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="pcs_v0")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--env-runners", type=int, default=2, help="0: sample in the driver")
    parser.add_argument(
        "--cpus-per-runner",
        type=float,
        default=1,
        help="CPUs Ray reserves per env runner: the thread budget of its env",
    )
    parser.add_argument("--width", type=int, default=4, help="pcs envs only")
    parser.add_argument("--height", type=int, default=4, help="pcs envs only")
    parser.add_argument("--num-uavs", type=int, default=8, help="aircraft_v0 only")
    parser.add_argument("--substeps", type=int, default=4, help="aircraft_v0 only")
    parser.add_argument("--max-cycles", type=int, default=25)
    parser.add_argument(
        "--count-steps-by",
        choices=("agent_steps", "env_steps"),
        default="agent_steps",
        help="unit of --batch and --minibatch (default: agent steps, one row per live agent)",
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=2048,
        help="rows per update, in --count-steps-by units; with env_steps an update holds "
        "batch x agents rows (default 2048: 128 env steps of a 4x4 grid)",
    )
    parser.add_argument(
        "--minibatch", type=int, default=None, help="SGD minibatch, <= --batch (default batch/4)"
    )
    parser.add_argument(
        "--torch-threads", type=int, default=1, help="torch threads everywhere (0: default)"
    )
    parser.add_argument("--address", default=None, help='Ray cluster to join ("auto", host:port)')
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.batch < 1:
        parser.error(f"--batch must be >= 1, got {args.batch}")
    if args.torch_threads < 0:
        parser.error(f"--torch-threads must be >= 0, got {args.torch_threads}")
    if args.minibatch is None:
        args.minibatch = max(1, args.batch // 4)
    if not 1 <= args.minibatch <= args.batch:
        parser.error(
            f"--minibatch must be in [1, --batch={args.batch}] ({args.count_steps_by}), "
            f"got {args.minibatch}"
        )
    return args


def main(argv: list[str] | None = None) -> list[float]:
    args = parse_args(argv)

    import ray
    import torch

    torch_threads = torch.get_num_threads()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)

    from seer_env.integrations import rllib as seer_rllib

    # Ray sets a runner's OMP_NUM_THREADS (torch's threads) to its CPU grant: the env's budget
    torch_env = {"env_vars": {"OMP_NUM_THREADS": str(args.torch_threads)}}
    runtime_env = torch_env if args.torch_threads > 0 else None
    if args.address is None:
        ray.init(
            num_cpus=max(2, int(args.env_runners * args.cpus_per_runner) + 1),
            include_dashboard=False,
            log_to_driver=False,
            ignore_reinit_error=True,
            runtime_env=runtime_env,
        )
    else:
        ray.init(
            address=args.address,
            log_to_driver=False,
            ignore_reinit_error=True,
            runtime_env=runtime_env,
        )
    seer_rllib.register()
    algo = build_config(args).build_algo()
    returns: list[float] = []
    try:
        for i in range(args.iterations):
            start = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - start
            runners = result["env_runners"]
            ret = float(runners.get("episode_return_mean", float("nan")))
            returns.append(ret)
            agent_steps = sum(runners.get("num_agent_steps_sampled", {}).values())
            print(
                f"iter {i + 1}: episode_return_mean {ret:9.3f}  "
                f"agent steps {agent_steps} ({runners.get('num_env_steps_sampled', 0)} env steps)  "
                f"{agent_steps / seconds:7.0f} agent steps/s  {seconds:.1f} s",
                flush=True,
            )
        for runner in seer_rllib.describe_env_runners(algo):
            pools = ", ".join(f"{e['executor']} x{e['num_threads']}" for e in runner["envs"])
            cpus = runner["ray_assigned_cpus"]
            where = "driver" if cpus is None else f"{cpus:g} CPU(s) reserved"
            print(
                f"env runner {runner['worker_index']}: {where}, "
                f"budget {runner['usable_threads']} thread(s), env pool {pools}",
                flush=True,
            )
            for env in runner["envs"]:
                if env["stpa_source"] is not None:
                    print(f"  STPA ({env['stpa_source']}): {env['stpa_reason']}", flush=True)
    finally:
        algo.stop()
        ray.shutdown()
        torch.set_num_threads(torch_threads)
    return returns


if __name__ == "__main__":
    main()
