"""Interleaved, repeated step timing: noise-robust medians on shared machines.

Each case is a callable running one step. After a warm-up, the cases take
turns: round r runs every case for ``steps_per_turn`` steps before round r+1,
and the turn order rotates every round, so a burst of noise from another
process hits all cases alike.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import numpy as np

# Idle runtime pools spin ~200 us before parking (docs/runtime.md): pause a
# little longer between turns so one case's spinning workers never steal the
# cores of the next case's timed steps.
SETTLE_S = 300e-6


@dataclasses.dataclass
class Case:
    """One thing to time: ``step()`` advances it by one step.

    ``step()`` may return a dict ``{part: seconds}`` splitting its own time
    (e.g. policy vs env for an inference step); the parts are summarized too.
    ``wake`` cases get one untimed step at the start of each turn, so a timed
    step never pays for waking a parked pool; executor cases all set it
    (serial too), so that every case is timed after the same untimed step.
    """

    name: str
    step: Callable[[], dict | None]
    events_per_step: Callable[[], float] | None = None
    meta: dict = dataclasses.field(default_factory=dict)
    wake: bool = False
    close: Callable[[], None] | None = None
    samples: list[float] = dataclasses.field(default_factory=list)
    events: list[float] = dataclasses.field(default_factory=list)
    parts: dict[str, list[float]] = dataclasses.field(default_factory=dict)


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
    order = list(cases)
    for r in range(rounds):
        for case in order[r % len(order) :] + order[: r % len(order)]:
            time.sleep(SETTLE_S)
            if case.wake:
                case.step()
            for _ in range(steps_per_turn):
                start = time.perf_counter()
                parts = case.step()
                case.samples.append(time.perf_counter() - start)
                for name, seconds in (parts or {}).items():
                    case.parts.setdefault(name, []).append(seconds)
                if case.events_per_step is not None:
                    case.events.append(case.events_per_step())
            if progress is not None:
                progress()


def summarize(case: Case) -> dict:
    """Median and p95 step latency, events/s, and the median of each part."""
    s = np.asarray(case.samples)
    median = float(np.median(s))
    out = {
        "name": case.name,
        "median_ms": median * 1e3,
        "p95_ms": float(np.percentile(s, 95) * 1e3),
        "steps": int(s.size),
        **case.meta,
    }
    for name, values in case.parts.items():
        out[f"{name}_median_ms"] = float(np.median(values) * 1e3)
    if case.events:
        ev = float(np.mean(case.events))
        out["events_per_step"] = ev
        out["events_per_s"] = ev / median if median > 0 else None
    return out
