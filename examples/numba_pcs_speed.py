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

import seer_env
from seer_env.models.numba_pcs import NumbaPcs


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


def interleaved_ratio(config: dict, steps: int, rounds: int) -> tuple[float, float, float]:
    """numba serial / C++ serial step time, stepping the two in turn.

    Returns the median of the per-pair ratios (one numba step, then one C++
    step: a load that comes and goes hits both), the ratio of the two
    fastest steps (what each costs when nothing interferes), and the
    median over rounds of ``steps`` pairs.
    """
    serial = {"executor": "serial", "num_threads": 1, "max_cycles": 10**6}
    envs = [seer_env.SeerParallelEnv(m, config, **serial) for m in (NumbaPcs, "pcs")]
    actions = np.zeros(len(envs[0].possible_agents), np.int64)
    for env in envs:
        env.reset(seed=0)
        env.step(dict(zip(env.agents, actions)))
    times: list[list[float]] = [[], []]
    for _ in range(rounds * steps):
        for i, env in enumerate(envs):
            started = time.perf_counter()
            env.sim.step(actions)
            times[i].append(time.perf_counter() - started)
    for env in envs:
        env.close()
    pairs = [a / b for a, b in zip(*times)]
    by_round = [
        statistics.median(times[0][r : r + steps]) / statistics.median(times[1][r : r + steps])
        for r in range(0, rounds * steps, steps)
    ]
    return statistics.median(pairs), min(times[0]) / min(times[1]), statistics.median(by_round)


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
    median, fastest, rounds = interleaved_ratio(config, args.steps, args.rounds)
    print(
        f"numba / C++ (serial, interleaved): {median:.2f}x median of step pairs, "
        f"{fastest:.2f}x fastest steps, {rounds:.2f}x median of rounds"
    )
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
