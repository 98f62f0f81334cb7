"""Interleaved, repeated step timing: noise-robust medians on shared machines.

Each case is a callable running one step. After a warm-up, the cases take
turns: round r runs every case for ``steps_per_turn`` steps before round r+1,
and the turn order rotates every round, so a burst of noise from another
process hits all cases alike.

Steps far shorter than the machine's noise (PHOLD 1024: ~0.1 ms) need more
samples than steps of tens of ms for a median as steady: with ``min_turn_s``
the group's steps per turn grow until a turn of its fastest case lasts about
that long (timed on the warm-up). Every case of the group still runs the same
number of steps, so all cases stay at the same simulated step.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import time
from collections.abc import Callable, Sequence

import numpy as np

# Idle runtime pools spin ~200 us before parking (docs/runtime.md): pause a
# little longer between turns so one case's spinning workers never steal the
# cores of the next case's timed steps.
SETTLE_S = 300e-6
# At most this many times the group's steps per turn from ``min_turn_s``.
MAX_TURN_GROWTH = 40


# What a step did, from ``last_step``: counts of work, not time, so they explain
# a ratio without noise (rounds and the entities each round found ready and
# scanned; threads < the pool's size means the adaptive pool shed some).
WORK_COUNTERS = ("events", "rounds", "ready", "queue_reads", "threads")


def work_counters(last_step: dict) -> dict:
    """The ``WORK_COUNTERS`` of a ``last_step`` dict."""
    return {k: last_step[k] for k in WORK_COUNTERS}


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
    # The last step's work counters (``work_counters``), for cases on the runtime.
    counters_per_step: Callable[[], dict] | None = None
    meta: dict = dataclasses.field(default_factory=dict)
    wake: bool = False
    close: Callable[[], None] | None = None
    # The runtime object (Simulation, VectorSimulation) whose executor it steps, if any.
    sim: object | None = None
    samples: list[float] = dataclasses.field(default_factory=list)
    # The median of each turn's samples, in round order: a comparison of two
    # cases paired by round cancels what changed on the machine between rounds.
    turn_medians: list[float] = dataclasses.field(default_factory=list)
    events: list[float] = dataclasses.field(default_factory=list)
    counters: list[dict] = dataclasses.field(default_factory=list)
    parts: dict[str, list[float]] = dataclasses.field(default_factory=dict)


def run_interleaved(
    cases: Sequence[Case],
    *,
    warmup_steps: int,
    rounds: int,
    steps_per_turn: int,
    min_turn_s: float = 0.0,
    progress: Callable[[], None] | None = None,
) -> int:
    """Fill each case's ``samples`` with per-step wall times (seconds).

    Returns the steps per turn used: ``steps_per_turn``, or more (up to
    ``MAX_TURN_GROWTH`` times) so that the fastest case's turn lasts about
    ``min_turn_s``, judged by its fastest warm-up step.
    """
    if not cases:  # every case was left out (a missing optional package): nothing to time
        return steps_per_turn
    fastest = float("inf")
    for case in cases:
        for _ in range(warmup_steps):
            start = time.perf_counter()
            case.step()
            fastest = min(fastest, time.perf_counter() - start)
    if min_turn_s > 0 and 0 < fastest < float("inf"):
        wanted = math.ceil(min_turn_s / fastest)
        steps_per_turn = max(steps_per_turn, min(wanted, steps_per_turn * MAX_TURN_GROWTH))
    # Garbage collection: with torch and the alternatives imported a full
    # collection scans ~350k objects (~165 ms here) and a generation-1 one
    # takes ~0.3 ms, both charged to whichever step allocates when the
    # thresholds are crossed, often after another case (the Python reference
    # envs) left the garbage. So the objects that exist after the warm-up are
    # frozen (collections no longer scan them), and each turn starts with a
    # collection of what the other cases left; a case still pays for
    # collecting its own garbage, as in a training loop.
    gc.collect()
    gc.freeze()
    try:
        order = list(cases)
        for r in range(rounds):
            for case in order[r % len(order) :] + order[: r % len(order)]:
                gc.collect()
                time.sleep(SETTLE_S)
                if case.wake:
                    case.step()
                turn = _timed_turn(case, steps_per_turn)
                case.samples += turn
                case.turn_medians.append(float(np.median(turn)))
                if progress is not None:
                    progress()
    finally:
        gc.unfreeze()
    return steps_per_turn


def _timed_turn(case: Case, steps: int) -> list[float]:
    """``steps`` timed steps of ``case``: their wall times; parts and events go into ``case``."""
    turn = []
    for _ in range(steps):
        start = time.perf_counter()
        parts = case.step()
        turn.append(time.perf_counter() - start)
        for name, seconds in (parts or {}).items():
            case.parts.setdefault(name, []).append(seconds)
        if case.events_per_step is not None:
            case.events.append(case.events_per_step())
        if case.counters_per_step is not None:
            case.counters.append(case.counters_per_step())
    return turn


def summarize(case: Case) -> dict:
    """Median and p95 step latency, each turn's median, events/s, the median of each part."""
    s = np.asarray(case.samples)
    median = float(np.median(s))
    out = {
        "name": case.name,
        "median_ms": median * 1e3,
        "p95_ms": float(np.percentile(s, 95) * 1e3),
        "steps": int(s.size),
        "turn_medians_ms": [t * 1e3 for t in case.turn_medians],
        **case.meta,
    }
    for name, values in case.parts.items():
        out[f"{name}_median_ms"] = float(np.median(values) * 1e3)
    if case.events:
        ev = float(np.mean(case.events))
        out["events_per_step"] = ev
        out["events_per_s"] = ev / median if median > 0 else None
    if case.counters:
        out["work_per_step"] = {
            k: float(np.mean([c[k] for c in case.counters])) for k in WORK_COUNTERS
        }
    return out


def paired_difference_ms(row: dict, other: dict) -> float | None:
    """Median over rounds of ``row``'s turn median minus ``other``'s (ms), or None.

    Both rows must come from one interleaved run (same rounds).
    """
    a, b = row.get("turn_medians_ms"), other.get("turn_medians_ms")
    if not a or not b or len(a) != len(b):
        return None
    return float(np.median(np.subtract(a, b)))
