"""Step times of PCS 64x64: numba and C++ (serial, parallel-2), interpreted (serial).

    python examples/numba_pcs_speed.py [--size 64] [--steps 20] [--rounds 5]

Prints the median step time of each and three ratios (docs/custom-models.md):
numba parallel-2 vs its own serial, numba serial vs the C++ model's serial,
and numba serial vs the same model interpreted (``compiled=False``), plus the
C++ model's own parallel-2 speed-up for scale. Run it on an idle machine: the
parallel ratios mean little while other processes share the cores.

``numba / C++ (serial, interleaved)`` is the ratio that holds on a busy
machine too: both envs live in this process and step in turn (one numba
step, one C++ step, ``--rounds`` x ``--steps`` pairs), so a load that comes
and goes slows both alike; it prints the median of the pairs' ratios, the
ratio of the fastest steps, and the median over rounds.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba_pcs import NumbaPcs  # examples/numba_pcs.py, beside this script

import seer_env
from seer_env.testing.speed import serial_step_ratio


def step_seconds(model, config: dict, steps: int, **options) -> float:
    env = seer_env.SeerParallelEnv(model, config, max_cycles=10**6, **options)
    env.reset(seed=0)
    actions = np.zeros(len(env.possible_agents), np.int64)
    env.step(dict(zip(env.agents, actions)))  # warm-up: pool started, pages touched
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        env.sim.step(actions)
        times.append(time.perf_counter() - started)
    env.close()
    return statistics.median(times)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--interpreted-steps", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--interleaved-only", action="store_true", help="only the interleaved serial ratio"
    )
    args = parser.parse_args(argv)
    config = {"width": args.size, "height": args.size}
    ratio = serial_step_ratio(NumbaPcs, "pcs", config, steps=args.steps, rounds=args.rounds)
    median = ratio.pairs
    print(f"numba / C++ (serial, interleaved): {ratio}")
    if args.interleaved_only:
        return {"numba / C++ (serial, interleaved)": median}
    serial = {"executor": "serial", "num_threads": 1}
    parallel2 = {"executor": "parallel", "num_threads": 2}
    t = {
        "numba serial": step_seconds(NumbaPcs, config, args.steps, **serial),
        "numba parallel-2": step_seconds(NumbaPcs, config, args.steps, **parallel2),
        "C++ serial": step_seconds("pcs", config, args.steps, **serial),
        "C++ parallel-2": step_seconds("pcs", config, args.steps, **parallel2),
        "interpreted serial": step_seconds(
            NumbaPcs, {**config, "compiled": False}, args.interpreted_steps, **serial
        ),
    }
    for name, seconds in t.items():
        print(f"{name:>20}: {seconds * 1e3:10.2f} ms/step")
    ratios = {
        "parallel-2 speed-up": t["numba serial"] / t["numba parallel-2"],
        "numba / C++ (serial)": t["numba serial"] / t["C++ serial"],
        "C++ parallel-2 speed-up": t["C++ serial"] / t["C++ parallel-2"],
        "interpreted / numba (serial)": t["interpreted serial"] / t["numba serial"],
    }
    for name, ratio in ratios.items():
        print(f"{name:>28}: {ratio:.2f}x")
    return {**t, **ratios, "numba / C++ (serial, interleaved)": median}


if __name__ == "__main__":
    main()
