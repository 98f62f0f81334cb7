"""Interleaved, repeated step timing: noise-robust medians on shared machines.

Each case is a callable running one step. After a warm-up, the cases take
turns: round r runs every case for ``steps_per_turn`` steps before round r+1,
so a burst of noise from another process hits all cases alike.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import numpy as np


@dataclasses.dataclass
class Case:
    """One thing to time: ``step()`` advances it by one step."""

    name: str
    step: Callable[[], object]
    events_per_step: Callable[[], float] | None = None
    meta: dict = dataclasses.field(default_factory=dict)
    samples: list[float] = dataclasses.field(default_factory=list)
    events: list[float] = dataclasses.field(default_factory=list)


def run_interleaved(
    cases: Sequence[Case],
    *,
    warmup_steps: int,
    rounds: int,
    steps_per_turn: int,
    progress: Callable[[], None] | None = None,
) -> None:
    """Fill each case's ``samples`` with per-step wall times (seconds)."""
    for case in cases:
        for _ in range(warmup_steps):
            case.step()
    for _ in range(rounds):
        for case in cases:
            for _ in range(steps_per_turn):
                start = time.perf_counter()
                case.step()
                case.samples.append(time.perf_counter() - start)
                if case.events_per_step is not None:
                    case.events.append(case.events_per_step())
            if progress is not None:
                progress()


def summarize(case: Case) -> dict:
    """Median and p95 step latency, events/s."""
    s = np.asarray(case.samples)
    out = {
        "name": case.name,
        "median_ms": float(np.median(s) * 1e3),
        "p95_ms": float(np.percentile(s, 95) * 1e3),
        "steps": int(s.size),
        **case.meta,
    }
    if case.events:
        ev = float(np.mean(case.events))
        out["events_per_step"] = ev
        out["events_per_s"] = ev / float(np.median(s)) if np.median(s) > 0 else None
    return out
