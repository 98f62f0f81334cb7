"""The default demo: ``python -m seer_env.demo``.

Steps the built-in workloads (pcs_v0, aircraft_v0, each at its default size)
under the serial executor, the parallel executor at each thread count this
machine offers, and ``num_threads="auto"``; checks that every run returns the
serial run's bytes; and prints the step latency of each, with the threads
each ran on.

The runs of a workload step in turn (one step of each, the order rotating
every step), so a load from another process that comes and goes slows them
alike: timed one after another, a busy phase during one run made ``auto``
look 3x faster than the very configuration it chose.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

import seer_env
from seer_env.env import DEFAULT_CHECK_STEPS
from seer_env.stpa.hardware import allowed_cpus

# Idle runtime pools spin ~200 us before parking (docs/runtime.md): pause a
# little longer before each timed step so that the previous run's spinning
# workers never take the cores of the next one.
SETTLE_S = 300e-6
# Untimed steps first: the first DEFAULT_CHECK_STEPS are checked one handler
# at a time (the contract checks), and one more starts every pool.
WARMUP_STEPS = DEFAULT_CHECK_STEPS + 1


@dataclasses.dataclass
class _Run:
    """One configuration of a workload: its env, its actions, what it returned and took."""

    label: str
    env: object
    actions: np.ndarray
    outputs: list[bytes] = dataclasses.field(default_factory=list)
    seconds: float = 0.0  # wall time of the timed steps
    steps: int = 0  # timed steps actually run (an episode may end before --steps)
    threads: set[int] = dataclasses.field(default_factory=set)  # threads_used of each

    def step(self) -> None:
        """One step with the run's fixed actions; its outputs are kept for the comparison."""
        obs, rewards, terms, truncs = self.env.step_arrays(self.actions)
        self.outputs += [obs.tobytes(), rewards.tobytes(), terms.tobytes(), truncs.tobytes()]

    def latency(self) -> str:
        """Mean step time of the timed steps, divided by the steps that ran."""
        if self.steps == 0:
            return f"{'n/a':>8}"
        return f"{self.seconds / self.steps * 1e3:8.3f}"

    def threads_used(self) -> str:
        """The threads the timed steps ran on (a range when the adaptive pool shed some)."""
        if not self.threads:
            return "-"
        low, high = min(self.threads), max(self.threads)
        return str(low) if low == high else f"{low}-{high}"


def _open(label: str, name: str, config: dict, seed: int, options: dict) -> _Run:
    env = seer_env.make(name, **config, **options)
    env.reset(seed=seed)
    space = env.action_space(env.possible_agents[0])
    space.seed(seed)
    actions = np.stack([space.sample() for _ in env.possible_agents])  # one fixed batch
    return _Run(label, env, actions)


def _time_interleaved(runs: list[_Run], steps: int) -> None:
    """Up to ``steps`` timed steps of every run, one step of each in turn."""
    for i in range(steps):
        live = [run for run in runs if run.env.agents]
        if not live:
            break
        # Rotate who goes first, so that no run always follows the same one.
        for run in live[i % len(live) :] + live[: i % len(live)]:
            time.sleep(SETTLE_S)
            start = time.perf_counter()
            run.step()
            run.seconds += time.perf_counter() - start
            run.steps += 1
            run.threads.add(run.env.runtime.threads_used)


def _steps(text: str) -> int:
    """The ``--steps`` value: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> None:
    """Run the demo."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=_steps, default=20, help="timed steps per run (>= 1)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cores = len(allowed_cpus())  # the affinity mask on Linux, every CPU elsewhere
    threads = sorted({1, 2, cores})
    print(
        f"seer_env {seer_env.__version__} on {cores} usable cores, up to {args.steps} timed "
        f"steps each (after {WARMUP_STEPS} untimed), the runs stepped in turn"
    )
    workloads = [("pcs_v0", {}), ("aircraft_v0", {})]
    for name, config in workloads:
        options = [("serial", dict(executor="serial", num_threads=1))]
        options += [(f"parallel x{t}", dict(executor="parallel", num_threads=t)) for t in threads]
        options += [("auto", dict(num_threads="auto"))]
        print(f"\n{name} (default config)")
        runs: list[_Run] = []
        try:
            for label, opts in options:
                runs.append(_open(label, name, config, args.seed, opts))
            for _ in range(WARMUP_STEPS):
                for run in runs:
                    if run.env.agents:
                        run.step()
            _time_interleaved(runs, args.steps)
            reference = b"".join(runs[0].outputs)
            for run in runs:
                same = b"".join(run.outputs) == reference
                runtime = run.env.runtime
                verdict = "identical" if same else "DIFFERENT"
                chosen = f"  -> {runtime.executor} x{runtime.num_threads}"
                ended = "" if run.steps == args.steps else f"  (episode over after {run.steps})"
                print(
                    f"  {run.label:>12}  {run.latency()} ms/step  threads used "
                    f"{run.threads_used():>3}  {runtime.events:>7} events/step  "
                    f"{runtime.rounds:>3} rounds  outputs {verdict} to serial"
                    f"{chosen if run.label == 'auto' else ''}{ended}"
                )
                if not same:
                    raise SystemExit("serial equivalence violated")
        finally:
            for run in runs:
                run.env.close()
    print("\nObservations, rewards, terminations and truncations compared byte for byte.")


if __name__ == "__main__":
    main()
