"""What a checked step costs against an unchecked one (docs/reliability.md's table).

Usage: python tools/check_cost.py [--steps N]. Two serial envs of each
workload, one with ``check=True`` (every step checked), one without, stepped
in alternation with the same actions; the medians of each one's step times
and their ratio. Then the default first-steps checks as a share of one
episode (``max_cycles`` steps): ``DEFAULT_CHECK_STEPS * (ratio - 1) / max_cycles``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from seer_env.env import DEFAULT_CHECK_STEPS
from seer_env.envs import aircraft_v0, pcs_v0

WORKLOADS = {
    "pcs_v0 64x64": (pcs_v0, {"width": 64, "height": 64}),
    "aircraft_v0 (defaults: 256 UAVs)": (aircraft_v0, {}),
}


def actions_for(env, step: int) -> np.ndarray:
    """Random actions for every agent, the same for every env at ``step``."""
    space = env.action_space(env.possible_agents[0])
    rng = np.random.default_rng([1, step])
    n = len(env.possible_agents)
    if hasattr(space, "n"):
        return rng.integers(0, space.n, n, dtype=np.int64)
    return rng.uniform(-1, 1, (n, *space.shape)).astype(np.float32)


def measure(module, config: dict, steps: int) -> dict:
    """Medians of checked and unchecked step times, their ratio and the default's share."""
    envs = {
        checked: module.parallel_env(
            **config, executor="serial", num_threads=1, check=checked, check_steps=0, seed=0
        )
        for checked in (False, True)
    }
    times: dict[bool, list[float]] = {False: [], True: []}
    for env in envs.values():
        env.reset()
    for k in range(steps):
        acts = actions_for(envs[False], k)
        for checked, env in envs.items():
            start = time.perf_counter()
            env.step_arrays(acts)
            times[checked].append(time.perf_counter() - start)
    assert envs[False].sim.digest() == envs[True].sim.digest()  # checking only observes
    unchecked, checked = (statistics.median(times[c]) for c in (False, True))
    max_cycles = envs[False].max_cycles
    return {
        "unchecked_ms": unchecked * 1e3,
        "checked_ms": checked * 1e3,
        "ratio": checked / unchecked,
        "max_cycles": max_cycles,
        "episode_share": DEFAULT_CHECK_STEPS * (checked / unchecked - 1) / max_cycles,
    }


def main() -> None:
    """Print the table of docs/reliability.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=7)
    args = parser.parse_args()
    print(f"DEFAULT_CHECK_STEPS = {DEFAULT_CHECK_STEPS}")
    print("| workload | unchecked step | checked step | ratio | default checks per episode |")
    print("|---|---|---|---|---|")
    for name, (module, config) in WORKLOADS.items():
        r = measure(module, config, args.steps)
        print(
            f"| {name} | {r['unchecked_ms']:.3g} ms | {r['checked_ms']:.3g} ms | "
            f"{r['ratio']:.1f}x | +{r['episode_share']:.1%} of a {r['max_cycles']}-step episode |"
        )


if __name__ == "__main__":
    main()
