"""The default demo: ``python -m seer_env.demo``.

Runs PHOLD (the standard PDES benchmark) on every executor and thread count
this machine offers, checks that every run ends in the same state digest as
the serial run, and prints the step latency of each.
"""

from __future__ import annotations

import argparse
import os
import time

import seer_env


def _run(
    config: dict, executor: str, threads: int, steps: int, seed: int
) -> tuple[int, float, int]:
    sim = seer_env.Simulation("phold", config, executor=executor, num_threads=threads)
    sim.reset(seed)
    sim.run_until(2.0)  # warm-up
    start = time.perf_counter()
    sim.run_until(2.0 + steps)
    elapsed = time.perf_counter() - start
    return sim.digest(), elapsed / steps, sim.events_processed


def main(argv: list[str] | None = None) -> None:
    """Run the demo."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=4096)
    parser.add_argument("--work", type=int, default=500, help="compute units per event")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    config = dict(num_entities=args.entities, population=1, remote=0.25, work=args.work)
    cores = len(os.sched_getaffinity(0))
    print(f"seer_env {seer_env.__version__}: PHOLD {config}, {args.steps} steps, {cores} cores")
    runs = [("serial", 1)] + [
        (name, t)
        for name in seer_env.executor_names()
        if name != "serial"
        for t in sorted({1, 2, cores})
    ]
    reference = None
    for executor, threads in runs:
        digest, latency, events = _run(config, executor, threads, args.steps, args.seed)
        reference = digest if reference is None else reference
        same = "identical" if digest == reference else "DIFFERENT"
        print(
            f"  {executor:>8} x{threads:<2}  {latency * 1e3:8.3f} ms/step  "
            f"{events / 1e3:8.1f}k events  digest {digest:016x} ({same} to serial)"
        )
        if digest != reference:
            raise SystemExit("serial equivalence violated")


if __name__ == "__main__":
    main()
