"""Re-validation: a cached choice against its challengers, a short duel on throw-away copies.

A cached decision may have been measured in a burst of load that the load
signals missed, or on a quieter machine than today's. Before a new env
reuses it, the cached choice runs a few steps against its *challengers*
(``reuse.challengers``: the runner-up of the preflight that made it and the
cached choice's neighbours on the thread ladder, at most ``MAX_CHALLENGERS``)
on copies, in interleaved blocks at the same step indices (``Preflight``), so
each step index gives a paired ratio ``challenger / cached`` per challenger.
The cached choice *loses* when some challenger is faster by more than
``MARGIN`` at the median ratio and faster in at least three quarters of its
pairs: beyond noise, not one lucky step. Losing sends ``choose`` to a fresh
preflight. (Against the runner-up alone, an entry made while the machine was
busy, "parallel x1" with serial as the runner-up, held every duel on a quiet
machine where two threads were 1.4x faster: the size that would have won was
never tried again.)

Cost: at most ``MAX_ROUNDS`` rounds, at least ``MIN_ROUNDS`` unless every
challenger is clearly slower (every pair slower, the median by more than
``MARGIN``: keeping the cached choice needs no more evidence), stopping once
``DUEL_BUDGET_S`` is spent. That is about a dozen steps of each copy at the
env's step time for large steps, a few milliseconds for small ones, and one
round when the challengers are far behind. Nothing of the env itself is
touched (its outputs never depend on the choice anyway).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Sequence

from seer_env.model_source import ModelSource
from seer_env.stpa.load import LoadSignal
from seer_env.stpa.preflight import Candidate, Preflight

MARGIN = 0.10  # a challenger must be this much faster at the median paired ratio
MAJORITY = 0.75  # ... and faster in at least this share of the paired steps
DUEL_BUDGET_S = 0.05  # target duel time; at least MIN_ROUNDS rounds run regardless
MIN_ROUNDS = 3
MAX_ROUNDS = 6
WAKE_WORTH_S = 2e-3  # steps shorter than this get an untimed pool wake-up per block


@dataclasses.dataclass(frozen=True)
class Challenge:
    """One challenger's paired steps against the cached choice."""

    candidate: Candidate
    median_ratio: float  # challenger / cached step time, median over paired steps
    faster: float  # share of paired steps where the challenger was faster
    pairs: int

    @property
    def won(self) -> bool:
        """Faster beyond noise: by ``MARGIN`` at the median, in ``MAJORITY`` of the pairs."""
        return self.median_ratio < 1.0 - MARGIN and self.faster >= MAJORITY

    def report(self) -> dict:
        """JSON-ready summary."""
        return {
            "candidate": self.candidate.label,
            "median_ratio": round(self.median_ratio, 4),
            "faster": round(self.faster, 3),
            "pairs": self.pairs,
            "won": self.won,
        }


@dataclasses.dataclass(frozen=True)
class Duel:
    """The outcome of one re-validation (``runner_up``: the strongest challenger)."""

    cached: Candidate
    runner_up: Candidate
    held: bool  # no challenger beat the cached choice beyond noise
    median_ratio: float  # the strongest challenger / cached step time, median over pairs
    runner_up_faster: float  # share of its paired steps where it was faster
    pairs: int
    seconds: float
    contended: bool
    load: dict
    challenges: tuple[Challenge, ...] = ()

    def report(self) -> dict:
        """JSON-ready summary (``env.runtime.stpa["cache"]["revalidation"]``)."""
        return {
            "cached": self.cached.label,
            "runner_up": self.runner_up.label,
            "held": self.held,
            "median_ratio": round(self.median_ratio, 4),
            "runner_up_faster": round(self.runner_up_faster, 3),
            "pairs": self.pairs,
            "challengers": [c.report() for c in self.challenges],
            "seconds": round(self.seconds, 4),
            "load": self.load,
        }


def paired_ratios(cached: list[float], challenger: list[float]) -> list[float]:
    """``challenger / cached`` step time per step index both have timed."""
    return [r / c for c, r in zip(cached, challenger) if c > 0]


def clearly_slower(ratios: list[float]) -> bool:
    """The challenger was slower in every pair and by more than ``MARGIN`` at the median."""
    return bool(ratios) and min(ratios) > 1.0 and statistics.median(ratios) > 1.0 + MARGIN


def duel(
    model: ModelSource,
    config: dict,
    cached: Candidate,
    challengers: Candidate | Sequence[Candidate],
    *,
    seed: int,
    signal: LoadSignal,
    event_budget: int = 50_000_000,
    num_envs: int = 1,
    budget_s: float = DUEL_BUDGET_S,
) -> Duel:
    """Time ``cached`` against each of ``challengers`` on copies of ``model``.

    Raises what stepping raises, and ValueError without a challenger.
    """
    rivals = [challengers] if isinstance(challengers, Candidate) else list(challengers)
    rivals = [c for c in dict.fromkeys(rivals) if c != cached]
    if not rivals:
        raise ValueError("a duel needs a challenger")
    start = time.perf_counter()
    pf = Preflight(model, config, seed=seed, event_budget=event_budget, num_envs=num_envs)
    try:
        step_s = pf.start(cached)
        for rival in rivals:
            pf.add(rival)
        before = signal.read()
        copies = 1 + len(rivals)
        # 2 timed steps per block when MIN_ROUNDS rounds of them fit the budget.
        timed = 2 if MIN_ROUNDS * copies * 3 * step_s <= budget_s else 1
        wake = step_s < WAKE_WORTH_S
        rounds = 0
        while rounds < MAX_ROUNDS:
            pf.run_round(timed, order_shift=rounds, wake=wake)
            rounds += 1
            ratios = {r: paired_ratios(pf.samples[cached], pf.samples[r]) for r in rivals}
            if all(clearly_slower(x) for x in ratios.values()):
                break
            if rounds >= MIN_ROUNDS and time.perf_counter() - start >= budget_s:
                break
        contention = signal.over(before, signal.read(), pf.run_cpu_s, pf.run_wall_s)
    finally:
        pf.close()
    if not all(ratios.values()):
        raise RuntimeError("the duel measured no step")
    challenges = tuple(
        Challenge(
            candidate=r,
            median_ratio=float(statistics.median(x)),
            faster=sum(v < 1.0 for v in x) / len(x),
            pairs=len(x),
        )
        for r, x in ratios.items()
    )
    # The one that won (if any), else the closest: what the report names.
    strongest = min(challenges, key=lambda c: (not c.won, c.median_ratio, -c.faster))
    return Duel(
        cached=cached,
        runner_up=strongest.candidate,
        held=not any(c.won for c in challenges),
        median_ratio=strongest.median_ratio,
        runner_up_faster=strongest.faster,
        pairs=strongest.pairs,
        seconds=time.perf_counter() - start,
        contended=contention.contended,
        load=contention.report(),
        challenges=challenges,
    )
