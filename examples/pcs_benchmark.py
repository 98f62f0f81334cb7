"""pcs_v0 step cost: C++ runtime vs the pure-Python reference, and where a dict step goes.

Usage: python examples/pcs_benchmark.py [--grid 32] [--split-grid 64] [--steps 50]
                                        [--executor serial] [--threads 1]

1. Per-step time of pcs_v0 (dict API and array API) and of the Python reference
   on a ``grid x grid`` torus, after a warm-up that fills the cells.
2. On ``split_grid x split_grid``: one dict-API step split into runtime time
   (``sim.last_step["seconds"]``) and the rest (action dict -> array, output dicts).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from seer_env.envs import pcs_v0
from seer_env.reference.pcs import PcsReference


def timed_steps(env, steps, rng, arrays=False):
    """Mean seconds per step, and mean runtime seconds per step for pcs_v0."""
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
        if hasattr(env, "sim"):
            runtime += env.sim.last_step["seconds"]
    return wall / steps, runtime / steps


def main() -> None:
    """Run both measurements and print a short report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=32)
    parser.add_argument("--split-grid", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--executor", default="serial")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    g, steps = args.grid, args.steps
    max_cycles = args.warmup + 2 * steps + 1
    run = dict(max_cycles=max_cycles, executor=args.executor, num_threads=args.threads)
    print(f"pcs_v0 on executor={args.executor}, num_threads={args.threads}")

    results = {}
    for name, make, arrays in [
        ("pcs_v0 dict", lambda: pcs_v0.parallel_env(width=g, height=g, **run), 0),
        ("pcs_v0 array", lambda: pcs_v0.parallel_env(width=g, height=g, **run), 1),
        ("reference", lambda: PcsReference(width=g, height=g, max_cycles=max_cycles), 0),
    ]:
        env = make()
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        timed_steps(env, args.warmup, rng, arrays)
        results[name] = timed_steps(env, steps, rng, arrays)
        events = env.stats()["events"] / (args.warmup + steps)
    print(f"{g}x{g}, {events:.0f} events/step, mean of {steps} steps after {args.warmup}:")
    for name, (wall, runtime) in results.items():
        extra = f" (runtime {runtime * 1e3:.3f} ms)" if name != "reference" else ""
        print(f"  {name:13s} {wall * 1e3:9.3f} ms/step{extra}")
    ref = results["reference"][0]
    print(f"  reference / pcs_v0 dict  = {ref / results['pcs_v0 dict'][0]:.1f}x")
    print(f"  reference / pcs_v0 array = {ref / results['pcs_v0 array'][0]:.1f}x")
    print(f"  reference / runtime only = {ref / results['pcs_v0 dict'][1]:.1f}x")

    s = args.split_grid
    env = pcs_v0.parallel_env(width=s, height=s, **run)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    timed_steps(env, args.warmup, rng)
    wall, runtime = timed_steps(env, steps, rng)
    print(
        f"{s}x{s} dict-API step: {wall * 1e3:.3f} ms = runtime {runtime * 1e3:.3f} ms "
        f"({runtime / wall:.0%}) + Python {(wall - runtime) * 1e3:.3f} ms "
        f"({(wall - runtime) / wall:.0%})"
    )
    array_wall, array_runtime = timed_steps(env, steps, rng, arrays=True)
    print(
        f"{s}x{s} array-API step: {array_wall * 1e3:.3f} ms (runtime {array_runtime * 1e3:.3f} ms)"
    )


if __name__ == "__main__":
    main()
