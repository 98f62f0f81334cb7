"""A benchmark group: one workload configuration and the cases compared on it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from bench.timing import Case


@dataclasses.dataclass(frozen=True)
class Target:
    """A claim to check: ``versus`` median / ``case`` median >= ``min_ratio``."""

    case: str
    versus: str
    min_ratio: float
    text: str


@dataclasses.dataclass(frozen=True)
class Ratio:
    """A ratio to report, not judged: ``versus`` median / ``case`` median."""

    case: str
    versus: str
    text: str


# Targets judged across groups rather than in one: each must hold in every quiet
# group that has both cases. They are judged over the ``full`` profile's groups
# (``make bench-full``); other profiles report them as indications.
EVERY_GROUP = (
    Target("parallel-2", "barrier-2", 0.97, "parallel-2 >= 0.97x barrier-2 in every group"),
    Target("parallel-1", "serial", 0.95, "parallel-1 >= 0.95x serial in every group"),
)
EVERY_GROUP_PROFILE = "full"


@dataclasses.dataclass
class Group:
    """One workload configuration and how to build its cases.

    ``build()`` returns the cases and notes on cases it had to leave out (a
    missing optional package). ``metric`` names what a step is: the env step
    (``env.step``) or the inference step (policy + ``env.step``).
    """

    workload: str
    label: str
    config: dict
    build: Callable[[], tuple[list[Case], list[str]]]
    steps_per_turn: int = 3
    rounds: int = 5
    warmup_steps: int = 3
    # More steps per turn where steps are short (timing.run_interleaved): a
    # turn of the fastest case lasts at least about this long.
    min_turn_s: float = 0.01
    metric: str = "env step"
    targets: tuple[Target, ...] = ()
    ratios: tuple[Ratio, ...] = ()  # reported beside the targets, not judged
    quiet_label: str | None = None  # set: this group repeats that quiet group under load
    # Lines derived from the summarized rows (e.g. the policy time hidden), added to the notes.
    derive: Callable[[list[dict]], list[str]] | None = None


# The contention groups: serial, parallel-2 and auto, one busy process per usable CPU.
LOAD_COUNTS = (2,)
LOAD_TARGETS = (Target("parallel-2", "serial", 0.9, "under load: parallel-2 >= 0.9x serial"),)
AUTO_VS_BEST_UNDER_LOAD = 0.95  # auto >= 0.95x the best fixed choice under the same load


def under_load(quiet: Group) -> Group:
    """``quiet``'s contention twin: same workload and cases, run beside busy processes.

    ``quiet.build`` must already build only the cases to compare under load
    (the workloads' ``group(..., under_load=True)`` do).
    """
    return dataclasses.replace(
        quiet,
        workload="contention",
        label=f"Under load: {quiet.label}",
        quiet_label=quiet.label,
        targets=LOAD_TARGETS,
        ratios=(),
    )


def reduction(percent: float) -> float:
    """The ratio versus / case of a latency ``percent`` % lower than ``versus``."""
    return 1.0 / (1.0 - percent / 100.0)
