"""The default demo: ``python -m seer_env.demo``.

Steps the built-in workloads (pcs_v0, aircraft_v0, each at its default size)
under the serial executor, the parallel executor at each thread count this
machine offers, and ``num_threads="auto"``; checks that every run returns the
serial run's bytes; and prints the step latency of each.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import seer_env
from seer_env.stpa.hardware import allowed_cpus


def _run(name: str, config: dict, steps: int, seed: int, **options) -> tuple[bytes, float, object]:
    env = seer_env.make(name, **config, **options)
    env.reset(seed=seed)
    space = env.action_space(env.possible_agents[0])
    space.seed(seed)
    actions = np.stack([space.sample() for _ in env.possible_agents])  # one fixed batch
    env.step_arrays(actions)  # warm-up (starts the thread pool)
    outputs = []
    start = time.perf_counter()
    for _ in range(steps):
        if not env.agents:
            break
        obs, rewards, terms, truncs = env.step_arrays(actions)
        outputs += [obs.tobytes(), rewards.tobytes(), terms.tobytes(), truncs.tobytes()]
    elapsed = (time.perf_counter() - start) / steps
    return b"".join(outputs), elapsed, env.runtime


def main(argv: list[str] | None = None) -> None:
    """Run the demo."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cores = len(allowed_cpus())  # the affinity mask on Linux, every CPU elsewhere
    threads = sorted({1, 2, cores})
    print(f"seer_env {seer_env.__version__} on {cores} usable cores, {args.steps} steps each")
    workloads = [("pcs_v0", {}), ("aircraft_v0", {})]
    for name, config in workloads:
        runs = [("serial", dict(executor="serial", num_threads=1))]
        runs += [(f"parallel x{t}", dict(executor="parallel", num_threads=t)) for t in threads]
        runs += [("auto", dict(num_threads="auto"))]
        reference = None
        print(f"\n{name} (default config)")
        for label, options in runs:
            out, latency, runtime = _run(name, config, args.steps, args.seed, **options)
            reference = out if reference is None else reference
            same = "identical" if out == reference else "DIFFERENT"
            chosen = f"  -> {runtime.executor} x{runtime.num_threads}" if label == "auto" else ""
            print(
                f"  {label:>12}  {latency * 1e3:8.3f} ms/step  {runtime.events:>7} events/step"
                f"  {runtime.rounds:>3} rounds  outputs {same} to serial{chosen}"
            )
            if out != reference:
                raise SystemExit("serial equivalence violated")
    print("\nObservations, rewards, terminations and truncations compared byte for byte.")


if __name__ == "__main__":
    main()
