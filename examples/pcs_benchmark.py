"""Where a pcs_v0 dict-API step goes: the C++ runtime vs Python dict building.

Usage: python examples/pcs_benchmark.py [--grid 64] [--steps 30] [--executor serial] [--threads 1]

The side-by-side comparisons (every executor, the Python reference, AsyncVectorEnv,
SuperSuit) are in ``make bench`` (``python -m bench --only PCS``,
docs/benchmarks.md). This example splits one ``env.step(dict)`` into the runtime's
own time (``sim.last_step["seconds"]``) and the rest (action dict -> array, the
five output dicts), and compares it with the ``step_arrays`` fast path.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from seer_env.envs import pcs_v0


def timed_steps(env, steps, rng, arrays=False):
    """Mean wall seconds per step and mean runtime seconds per step."""
    wall = runtime = 0.0
    for _ in range(steps):
        guards = rng.integers(0, 3, len(env.agents))
        if arrays:
            start = time.perf_counter()
            env.step_arrays(guards)
        else:
            actions = dict(zip(env.agents, guards.tolist()))
            start = time.perf_counter()
            env.step(actions)
        wall += time.perf_counter() - start
        runtime += env.sim.last_step["seconds"]
    return wall / steps, runtime / steps


def main(argv: list[str] | None = None) -> None:
    """Measure and print the split."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=64)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--executor", default="serial")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    g = args.grid
    env = pcs_v0.parallel_env(
        width=g, height=g, executor=args.executor, num_threads=args.threads, max_cycles=10**9
    )
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    timed_steps(env, args.warmup, rng)
    wall, runtime = timed_steps(env, args.steps, rng)
    print(
        f"{g}x{g} dict-API step: {wall * 1e3:.3f} ms = runtime {runtime * 1e3:.3f} ms "
        f"({runtime / wall:.0%}) + Python {(wall - runtime) * 1e3:.3f} ms "
        f"({(wall - runtime) / wall:.0%})"
    )
    array_wall, array_runtime = timed_steps(env, args.steps, rng, arrays=True)
    print(
        f"{g}x{g} array-API step: {array_wall * 1e3:.3f} ms (runtime {array_runtime * 1e3:.3f} ms)"
    )


if __name__ == "__main__":
    main()
