"""The benchmark configurations: what is compared with what.

A suite is a list of groups; each group is one workload configuration whose
cases (executors, thread counts, baselines) are timed interleaved, side by
side, and reported relative to the group's serial case.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

import seer_env
from seer_env.bench.machine import usable_cpus
from seer_env.bench.timing import Case


@dataclasses.dataclass
class Group:
    """One workload configuration and how to build its cases."""

    workload: str
    label: str
    config: dict
    build: Callable[[], list[Case]]
    steps_per_turn: int = 5
    rounds: int = 5
    warmup_steps: int = 3


def thread_counts() -> list[int]:
    """1, 2, 4, ... up to the usable CPUs (always including that count)."""
    n = usable_cpus()
    counts = [1]
    while counts[-1] * 2 <= n:
        counts.append(counts[-1] * 2)
    if counts[-1] != n:
        counts.append(n)
    return counts


def executor_variants(include_baselines: bool = True) -> list[tuple[str, int]]:
    """(executor, threads) pairs: serial, parallel at each count, the baselines."""
    variants = [("serial", 1)] + [("parallel", t) for t in thread_counts()]
    if include_baselines:
        top = thread_counts()[-1]
        for name in seer_env.executor_names():
            if name not in ("serial", "parallel"):
                variants.append((name, top))
    return variants


# -- PHOLD --------------------------------------------------------------------------------


def phold_cases(config: dict) -> list[Case]:
    """Every executor variant on one PHOLD configuration."""
    cases = []
    for executor, threads in executor_variants():
        sim = seer_env.Simulation("phold", config, executor=executor, num_threads=threads)
        sim.reset(0)

        def step(sim=sim):
            sim.run_until(sim.now + 1.0)

        cases.append(
            Case(
                name=f"{executor}-{threads}" if executor != "serial" else "serial",
                step=step,
                events_per_step=lambda sim=sim: sim.last_step["events"],
                meta={"executor": executor, "threads": threads},
            )
        )
    return cases


def phold_group(entities: int, work: int, label: str, steps: int = 5) -> Group:
    """PHOLD with `entities`, one token each, 25% remote, `work` units per event."""
    config = dict(num_entities=entities, population=1, remote=0.25, work=work, dt=1.0)
    return Group("phold", label, config, lambda: phold_cases(config), steps_per_turn=steps)


def default_suite() -> list[Group]:
    """The ``make bench`` profile: a few minutes on 2 cores."""
    return [
        phold_group(4096, 0, "PHOLD 4096, ~0.15 us/event"),
        phold_group(4096, 400, "PHOLD 4096, ~0.5 us/event"),
        phold_group(4096, 4000, "PHOLD 4096, ~5 us/event", steps=2),
    ]


def full_suite() -> list[Group]:
    """``make bench-full``: sweeps sizes and intensities."""
    groups = []
    for entities in (1024, 4096, 16384, 65536):
        for work in (0, 400, 4000):
            steps = max(1, 5 * 4096 // entities) if work < 4000 else 1
            groups.append(phold_group(entities, work, f"PHOLD {entities}, work {work}", steps))
    return groups


SUITES = {"default": default_suite, "full": full_suite}


def random_actions(space, n: int, seed: int) -> np.ndarray:
    """A fixed batch of valid actions for `n` agents."""
    rng = np.random.default_rng(seed)
    if hasattr(space, "n"):
        return rng.integers(0, space.n, size=n, dtype=np.int64)
    return rng.uniform(space.low, space.high, size=(n, *space.shape)).astype(np.float32)
