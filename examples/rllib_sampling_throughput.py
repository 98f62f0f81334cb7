"""RLlib sampling throughput (agent steps/s) on pcs_v0 with 0, 1, 2, ... env runners.

    python examples/rllib_sampling_throughput.py                        # 0, 1 and 2 runners
    python examples/rllib_sampling_throughput.py --runners 1 --cpus-per-runner 2

For each runner count it builds PPO (``count_steps_by="agent_steps"``) on a
fresh local Ray instance sized to this machine's usable CPUs, samples once to
warm up (runners start, envs are built, STPA decides), then times
``synchronous_parallel_sample`` (what PPO's training step calls) collecting
``--agent-steps`` agent steps, ``--repeats`` times, and reports the median.
Policy inference in the runners is included; the update is not. With 0
runners the driver samples. Torch gets ``--torch-threads`` threads in the
driver and in every runner (Ray's default is the runner's CPU grant, which
made a 2-CPU runner 5x slower on a busy machine). Each runner's pool and
STPA's reason are printed.
"""

from __future__ import annotations

import argparse
import statistics
import time


def _torch_threads_env(threads: int) -> dict | None:
    """Runtime env giving every runner's torch ``threads`` threads (None: Ray's rule).

    Ray sets ``OMP_NUM_THREADS`` to a runner's CPU grant, so torch in a 2-CPU
    runner spins 2 threads next to the env's pool.
    """
    return {"env_vars": {"OMP_NUM_THREADS": str(threads)}} if threads > 0 else None


def measure(args: argparse.Namespace, runners: int) -> dict:
    """Median sampling throughput with ``runners`` env runners, and each runner's pool."""
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.execution.rollout_ops import synchronous_parallel_sample

    from seer_env.integrations import rllib as seer_rllib
    from seer_env.stpa import hardware

    ray.init(
        num_cpus=max(hardware.usable_threads(), int(runners * args.cpus_per_runner)),
        include_dashboard=False,
        log_to_driver=False,
        runtime_env=_torch_threads_env(args.torch_threads),
    )
    try:
        seer_rllib.register(["pcs_v0"])
        config = (
            PPOConfig()
            .environment(
                "pcs_v0",
                env_config={
                    "width": args.width,
                    "height": args.height,
                    "max_cycles": args.max_cycles,
                    "seed": 0,
                },
            )
            .framework("torch")
            .env_runners(
                num_env_runners=runners,
                num_cpus_per_env_runner=args.cpus_per_runner,
                rollout_fragment_length="auto",
            )
            .learners(num_learners=0)
            .training(train_batch_size_per_learner=args.agent_steps, minibatch_size=128)
            .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32, 32]))
            .multi_agent(
                policies={"shared"},
                policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared",
                count_steps_by="agent_steps",
            )
            .debugging(seed=0, log_level="ERROR")
        )
        algo = config.build_algo()
        try:

            def sample() -> tuple[int, int, float]:
                start = time.perf_counter()
                episodes = synchronous_parallel_sample(
                    worker_set=algo.env_runner_group,
                    max_agent_steps=args.agent_steps,
                    sample_timeout_s=300,
                    _uses_new_env_runners=True,
                )
                seconds = time.perf_counter() - start
                agent_steps = sum(e.agent_steps() for e in episodes)
                env_steps = sum(e.env_steps() for e in episodes)
                return agent_steps, env_steps, seconds

            sample()  # warm-up: envs built, STPA decided, torch warmed
            runs = [sample() for _ in range(args.repeats)]
            pools = seer_rllib.describe_env_runners(algo)
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    rates = [a / s for a, _, s in runs]
    return {
        "runners": runners,
        "cpus_per_runner": args.cpus_per_runner if runners else None,
        "agent_steps_per_s": statistics.median(rates),
        "env_steps_per_s": statistics.median(e / s for _, e, s in runs),
        "agent_steps": [a for a, _, _ in runs],
        "pools": pools,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--cpus-per-runner", type=float, default=1)
    parser.add_argument("--width", type=int, default=4)
    parser.add_argument("--height", type=int, default=4)
    parser.add_argument("--max-cycles", type=int, default=25)
    parser.add_argument("--agent-steps", type=int, default=4096, help="per timed sample")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--torch-threads", type=int, default=1, help="torch threads everywhere (0: default)"
    )
    args = parser.parse_args(argv)
    if min(args.runners) < 0 or args.agent_steps < 1 or args.repeats < 1:
        parser.error("--runners must be >= 0, --agent-steps and --repeats >= 1")

    import torch

    torch_threads = torch.get_num_threads()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    try:
        return _measure_all(args)
    finally:
        torch.set_num_threads(torch_threads)


def _measure_all(args: argparse.Namespace) -> list[dict]:
    results = []
    print("| env runners | CPUs per runner | agent steps/s | env steps/s | env pools (STPA) |")
    print("|---|---|---|---|---|")
    for runners in args.runners:
        r = measure(args, runners)
        pools = "; ".join(
            f"{'driver' if p['ray_assigned_cpus'] is None else 'runner'} {p['worker_index']}: "
            + ", ".join(f"{e['executor']} x{e['num_threads']}" for e in p["envs"])
            for p in r["pools"]
        )
        print(
            f"| {runners} | {r['cpus_per_runner'] or '-'} | {r['agent_steps_per_s']:.0f} "
            f"| {r['env_steps_per_s']:.0f} | {pools} |",
            flush=True,
        )
        for p in r["pools"]:
            for e in p["envs"]:
                print(f"    worker {p['worker_index']} STPA: {e['stpa_reason']}", flush=True)
        results.append(r)
    return results


if __name__ == "__main__":
    main()
