"""aircraft_v0 latency: env step (C++ serial / parallel, NumPy reference) and the decision loop.

Usage: python examples/aircraft_benchmark.py [--sizes 256 1024] [--steps 50] [--threads 2]
                                             [--reference] [--hidden 64 64]

1. Per-step ``env.step_arrays`` time for each swarm size on ``serial`` and on
   ``parallel`` with ``--threads`` threads (the time inside the C++ step in
   brackets), after ``--warmup`` steps; optionally the NumPy reference.
2. "Inference latency": the full decision loop (batched MLP forward on every
   observation, then ``env.step``), split into policy and env parts.

Actions are gentle (an untrained MLP with ``action_scale`` 0.1, or uniform
noise of that size), so the swarm keeps flying and every step does the full
work.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import seer_env
from seer_env.envs import aircraft_v0
from seer_env.policy import MlpPolicy, run_decision_loop


def env_step_ms(n, executor, threads, steps, warmup, scale):
    """Mean wall ms and C++-step ms per step_arrays call, and UAVs still flying at the end."""
    env = aircraft_v0.parallel_env(
        num_uavs=n, executor=executor, num_threads=threads, max_cycles=10**6, seed=0
    )
    env.reset()
    rng = np.random.default_rng(0)
    wall = runtime = 0.0
    for i in range(warmup + steps):
        actions = (rng.uniform(-1, 1, (n, 4)) * scale).astype(np.float32)
        start = time.perf_counter()
        env.step_arrays(actions)
        if i >= warmup:
            wall += time.perf_counter() - start
            runtime += env.sim.last_step["seconds"]
    return 1e3 * wall / steps, 1e3 * runtime / steps, len(env.agents), env.runtime


def reference_step_ms(n, steps, scale):
    from seer_env.reference.aircraft import AircraftReference

    ref = AircraftReference(num_uavs=n)
    ref.reset(0)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(steps):
        ref.step((rng.uniform(-1, 1, (n, 4)) * scale).astype(np.float32))
    return 1e3 * (time.perf_counter() - start) / steps


def main() -> None:
    """Run the measurements and print a report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[2])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 64])
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--reference", action="store_true", help="also time the NumPy reference")
    args = parser.parse_args()
    runs = [("serial", 1)]
    if "parallel" in seer_env.executor_names():
        runs += [("parallel", t) for t in args.threads]

    print(f"# env.step_arrays, ms per step (inside the C++ step), {args.steps} steps")
    for n in args.sizes:
        for executor, threads in runs:
            wall, runtime, alive, info = env_step_ms(
                n, executor, threads, args.steps, args.warmup, args.scale
            )
            print(
                f"N={n:5d} {executor:8s} threads={threads:2d}: {wall:8.3f} ms ({runtime:8.3f}) "
                f"events/step={info.events} rounds={info.rounds} flying={alive}"
            )
        if args.reference:
            ms = reference_step_ms(n, max(3, args.steps // 10), args.scale)
            print(f"N={n:5d} numpy reference        : {ms:8.3f} ms")

    print(f"\n# decision loop (MLP {args.hidden}, {args.backend}), {args.steps} steps")
    for n in args.sizes:
        for executor, threads in runs:
            env = aircraft_v0.parallel_env(
                num_uavs=n, executor=executor, num_threads=threads, max_cycles=10**6
            )
            policy = MlpPolicy.for_env(
                env, hidden=args.hidden, backend=args.backend, action_scale=args.scale
            )
            report = run_decision_loop(env, policy, steps=args.steps, warmup=args.warmup)
            s = report.summary()
            print(
                f"N={n:5d} {executor:8s} threads={threads:2d}: total {s['total_mean_ms']:8.3f} ms"
                f" = policy {s['policy_mean_ms']:7.3f} + env {s['env_mean_ms']:8.3f}"
                f" (p95 total {s['total_p95_ms']:8.3f})"
            )


if __name__ == "__main__":
    main()
