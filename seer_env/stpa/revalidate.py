"""Re-validation: a cached choice against its runner-up, a short duel on throw-away copies.

A cached decision may have been measured in a burst of load, or on a quieter
machine than today's. Before a new env reuses it, the cached choice and the
runner-up of the preflight that made it (the best other candidate) run a few
steps each on two copies, in interleaved blocks at the same step indices
(``Preflight``), so each step index gives a paired ratio
``runner-up / cached``. The cached choice *loses* when the runner-up is
faster by more than ``MARGIN`` at the median ratio and faster in at least
three quarters of the pairs: beyond noise, not one lucky step. Losing sends
``choose`` to a fresh preflight.

Cost: at most ``MAX_ROUNDS`` rounds, at least ``MIN_ROUNDS`` unless the
runner-up is clearly slower (every pair slower, the median by more than
``MARGIN``: keeping the cached choice needs no more evidence), stopping once
``DUEL_BUDGET_S`` is spent. That is about a dozen steps at the env's step
time for large steps, a few milliseconds for small ones, and one round when
the runner-up is far behind (e.g. a large pool under heavy load). Nothing of
the env itself is touched (its outputs never depend on the choice anyway).
"""

from __future__ import annotations

import dataclasses
import statistics
import time

from seer_env.model_source import ModelSource
from seer_env.stpa.load import LoadSignal
from seer_env.stpa.preflight import Candidate, Preflight

MARGIN = 0.10  # the runner-up must be this much faster at the median paired ratio
MAJORITY = 0.75  # ... and faster in at least this share of the paired steps
DUEL_BUDGET_S = 0.05  # target duel time; at least MIN_ROUNDS rounds run regardless
MIN_ROUNDS = 3
MAX_ROUNDS = 6
WAKE_WORTH_S = 2e-3  # steps shorter than this get an untimed pool wake-up per block


@dataclasses.dataclass(frozen=True)
class Duel:
    """The outcome of one re-validation."""

    cached: Candidate
    runner_up: Candidate
    held: bool  # the cached choice did not lose beyond noise
    median_ratio: float  # runner-up / cached step time, median over paired steps
    runner_up_faster: float  # share of paired steps where the runner-up was faster
    pairs: int
    seconds: float
    contended: bool
    load: dict

    def report(self) -> dict:
        """JSON-ready summary (``env.runtime.stpa["cache"]["revalidation"]``)."""
        return {
            "cached": self.cached.label,
            "runner_up": self.runner_up.label,
            "held": self.held,
            "median_ratio": round(self.median_ratio, 4),
            "runner_up_faster": round(self.runner_up_faster, 3),
            "pairs": self.pairs,
            "seconds": round(self.seconds, 4),
            "load": self.load,
        }


def paired_ratios(cached: list[float], runner_up: list[float]) -> list[float]:
    """``runner-up / cached`` step time per step index both have timed."""
    return [r / c for c, r in zip(cached, runner_up) if c > 0]


def clearly_slower(ratios: list[float]) -> bool:
    """The runner-up was slower in every pair and by more than ``MARGIN`` at the median."""
    return bool(ratios) and min(ratios) > 1.0 and statistics.median(ratios) > 1.0 + MARGIN


def duel(
    model: ModelSource,
    config: dict,
    cached: Candidate,
    runner_up: Candidate,
    *,
    seed: int,
    signal: LoadSignal,
    event_budget: int = 50_000_000,
    num_envs: int = 1,
    budget_s: float = DUEL_BUDGET_S,
) -> Duel:
    """Time ``cached`` against ``runner_up`` on copies of ``model``; raises what stepping raises."""
    start = time.perf_counter()
    pf = Preflight(model, config, seed=seed, event_budget=event_budget, num_envs=num_envs)
    try:
        step_s = pf.start(cached)
        pf.add(runner_up)
        before = signal.read()
        # 2 timed steps per block when MIN_ROUNDS rounds of them fit the budget.
        timed = 2 if MIN_ROUNDS * 2 * 3 * step_s <= budget_s else 1
        wake = step_s < WAKE_WORTH_S
        rounds = 0
        while rounds < MAX_ROUNDS:
            pf.run_round(timed, order_shift=rounds, wake=wake)
            rounds += 1
            ratios = paired_ratios(pf.samples[cached], pf.samples[runner_up])
            if clearly_slower(ratios):
                break
            if rounds >= MIN_ROUNDS and time.perf_counter() - start >= budget_s:
                break
        contention = signal.over(before, signal.read(), pf.run_cpu_s, pf.run_wall_s)
    finally:
        pf.close()
    if not ratios:
        raise RuntimeError("the duel measured no step")
    median = statistics.median(ratios)
    faster = sum(r < 1.0 for r in ratios) / len(ratios)
    lost = median < 1.0 - MARGIN and faster >= MAJORITY
    return Duel(
        cached=cached,
        runner_up=runner_up,
        held=not lost,
        median_ratio=float(median),
        runner_up_faster=float(faster),
        pairs=len(ratios),
        seconds=time.perf_counter() - start,
        contended=contention.contended,
        load=contention.report(),
    )
