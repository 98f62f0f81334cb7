"""aircraft_v0 latency: env step per executor, NumPy reference, and the decision loop.

Usage: python examples/aircraft_benchmark.py [--sizes 256 1024] [--threads 1 2]
                                             [--rounds 5] [--reference] [--hidden 64 64]

1. ``env.step_arrays`` per step on ``serial`` and on each other executor at
   ``--threads`` threads, timed interleaved (``seer_env.bench.timing``: the
   cases take turns, so noise from other processes hits all alike); medians.
2. Optionally the NumPy reference (``seer_env.reference.aircraft``).
3. "Inference latency": the full decision loop (batched MLP forward on every
   observation, then ``env.step_arrays``), medians of the policy and env parts.

Actions are gentle (uniform noise of size ``--scale``, or an untrained MLP
with that ``action_scale``), so the swarm keeps flying and every step does the
full work. Set ``OMP_NUM_THREADS=1`` so that NumPy's BLAS does not compete
with the runtime's threads.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import seer_env
from seer_env.bench.timing import Case, run_interleaved, summarize
from seer_env.envs import aircraft_v0
from seer_env.policy import MlpPolicy, run_decision_loop


def step_case(n, executor, threads, scale):
    """A Case stepping aircraft_v0 with a fixed batch of gentle actions."""
    env = aircraft_v0.parallel_env(
        num_uavs=n, executor=executor, num_threads=threads, max_cycles=10**6, seed=0
    )
    env.reset()
    actions = (np.random.default_rng(0).uniform(-1, 1, (n, 4)) * scale).astype(np.float32)
    return Case(
        name=f"{executor}-{threads}",
        step=lambda: env.step_arrays(actions),
        events_per_step=lambda: env.sim.last_step["events"],
        meta={"env": env},
    )


def reference_step_ms(n, steps, scale):
    """Mean ms per step of the NumPy reference."""
    from seer_env.reference.aircraft import AircraftReference

    ref = AircraftReference(num_uavs=n)
    ref.reset(0)
    actions = (np.random.default_rng(0).uniform(-1, 1, (n, 4)) * scale).astype(np.float32)
    ref.step(actions)
    start = time.perf_counter()
    for _ in range(steps):
        ref.step(actions)
    return 1e3 * (time.perf_counter() - start) / steps


def main() -> None:
    """Run the measurements and print a report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--executors", nargs="+", default=None, help="default: all but serial")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps-per-turn", type=int, default=5)
    parser.add_argument("--loop-steps", type=int, default=50)
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 64])
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--reference", action="store_true", help="also time the NumPy reference")
    args = parser.parse_args()
    executors = args.executors or [e for e in seer_env.executor_names() if e != "serial"]
    variants = [("serial", 1)] + [(e, t) for e in executors for t in args.threads]

    steps = args.rounds * args.steps_per_turn
    print(f"# env.step_arrays per step: median (p95) over {steps} steps, interleaved")
    for n in args.sizes:
        cases = [step_case(n, e, t, args.scale) for e, t in variants]
        run_interleaved(
            cases, warmup_steps=3, rounds=args.rounds, steps_per_turn=args.steps_per_turn
        )
        base = np.median(cases[0].samples)
        for case in cases:
            s = summarize(case)
            env = case.meta["env"]
            print(
                f"N={n:5d} {case.name:12s} {s['median_ms']:8.3f} ms ({s['p95_ms']:8.3f})"
                f"  x{base / np.median(case.samples):5.2f} vs serial"
                f"  events/step={int(np.mean(case.events))} rounds={env.runtime.rounds}"
                f" flying={len(env.agents)}"
            )
        if args.reference:
            ms = reference_step_ms(n, 5, args.scale)
            print(f"N={n:5d} {'numpy-ref':12s} {ms:8.3f} ms (mean of 5)")

    print(f"\n# decision loop, MLP {args.hidden} ({args.backend}): medians over {args.loop_steps}")
    for n in args.sizes:
        for executor, threads in variants:
            env = aircraft_v0.parallel_env(
                num_uavs=n, executor=executor, num_threads=threads, max_cycles=10**6
            )
            policy = MlpPolicy.for_env(
                env, hidden=args.hidden, backend=args.backend, action_scale=args.scale
            )
            report = run_decision_loop(env, policy, steps=args.loop_steps, warmup=3)
            s = report.summary()
            print(
                f"N={n:5d} {executor}-{threads:<4d}  total {s['total_p50_ms']:8.3f} ms"
                f" = policy {s['policy_p50_ms']:7.3f} + env {s['env_p50_ms']:8.3f}"
                f"  (p95 total {s['total_p95_ms']:8.3f})"
            )


if __name__ == "__main__":
    main()
