"""The preflight driver: probe, prune with the static model, measure, decide, report.

A serial probe gives the trace (events, rounds, time per event); the static
cost model (``cost_model.py``) prunes pool sizes that cannot win; the rest are
measured on throw-away copies in interleaved blocks (``preflight.py``) within
a time budget, hill-climbing past the static model's sizes while the measured
optimum sits at the edge. The machine's load is read around it (``load.py``):
on a quiet machine each candidate is scored by its upper-quartile step (a
spinning pool degrades badly when other processes take its cores, so a size
must be fast in most steps, not just in a quiet moment); under contention by
its fastest step, what a size does when the load lets it. ``rules.py`` then
chooses among the scores.
"""

from __future__ import annotations

import math
import os
import time

from seer_env.model_source import ModelSource
from seer_env.stpa import cost_model, load
from seer_env.stpa.decision import Decision, fixed
from seer_env.stpa.load import LoadSignal
from seer_env.stpa.preflight import SERIAL, Candidate, Preflight
from seer_env.stpa.rules import _decide

DEFAULT_BUDGET_S = 0.25  # target preflight time (at least MIN_ROUNDS rounds run regardless)
MIN_ROUNDS = 2
MAX_ROUNDS = 8
MAX_EXTENSIONS = 2  # hill-climb steps beyond the static model's candidates
PREFLIGHT_SEED = 0x57BA  # the copies' own seed: never the env's


def _static_features(spec: dict) -> dict:
    return {
        "num_entities": spec["num_entities"],
        "num_agents": spec["num_agents"],
        "lookahead": spec["lookahead"],
        "dt": spec["dt"],
        "lookahead_over_dt": spec["lookahead"] / spec["dt"],
    }


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _preflight(
    model: ModelSource,
    config: dict,
    executor: str | None,
    event_budget: int,
    budget_s: float,
    features: dict,
    num_envs: int = 1,
    signal: LoadSignal | None = None,
) -> Decision:
    """Measure the candidates for ``model`` with ``config`` and decide (see the module doc)."""
    signal = signal if signal is not None else load.default_signal()
    before = signal.read()
    start = time.perf_counter()
    max_threads = features["usable_threads"]
    cores = features["physical_cores"]
    parallel_name = executor or "parallel"
    pf = Preflight(model, config, seed=PREFLIGHT_SEED, event_budget=event_budget, num_envs=num_envs)
    try:
        serial_s = pf.probe()
        spec = pf.spec
        static = _static_features(spec)
        trace = cost_model.Trace(
            seconds_per_step=serial_s,
            events_per_step=_mean(pf.events),
            cross_events_per_step=_mean(pf.cross_events),
            rounds_per_step=cost_model.estimated_rounds(spec["lookahead"], spec["dt"]),
            num_entities=spec["num_entities"] * num_envs,
            num_agents=spec["num_agents"] * num_envs,
            lookahead_over_dt=static["lookahead_over_dt"],
        )
        plan = cost_model.plan(trace, max_threads, cores, serial_allowed=executor is None)
        for p in plan.measure:
            pf.add(Candidate(p, parallel_name))
        extensions = 0
        rounds = 0
        while len(pf.candidates) > 1 and rounds < MAX_ROUNDS:
            # Steps per block: as many as fit the budget, 1..3.
            per_step = sum(plan.predicted.get(c.num_threads, serial_s) for c in pf.candidates)
            left = budget_s - (time.perf_counter() - start)
            timed = max(1, min(3, math.floor(left / max(per_step * MIN_ROUNDS, 1e-9)) - 1))
            pf.run_round(timed, order_shift=rounds)
            rounds += 1
            elapsed = time.perf_counter() - start
            measured = {
                c.num_threads: s for c, s in pf.medians().items() if c.executor == parallel_name
            }
            nxt = cost_model.next_size(measured, max_threads) if plan.measure else None
            if nxt is not None and extensions < MAX_EXTENSIONS and elapsed < budget_s / 2:
                pf.add(Candidate(nxt, parallel_name))
                extensions += 1
                continue
            if rounds >= MIN_ROUNDS and elapsed >= budget_s:
                break
    except Exception as exc:  # noqa: BLE001 - the env's own run will raise it where it matters
        pf.close()
        return fixed(
            executor or "serial",
            1,
            "static",
            f"preflight failed ({type(exc).__name__}: {exc}); one thread is always safe",
            features=features,
        )

    contention = signal.over(before, signal.read(), pf.run_cpu_s, pf.run_wall_s)
    medians = pf.medians()
    quartiles = pf.upper_quartiles()
    # Under contention each candidate is scored by its fastest step (see the
    # module doc): the load's share of the others is noise of this moment.
    scores = pf.minimums() if contention.contended else quartiles
    score_name = "fastest step (contended)" if contention.contended else "upper-quartile step"
    rounds_measured = [r for c, rs in pf.rounds.items() if c != SERIAL for r in rs]
    trace_report = {
        "steps": pf.steps,
        "events_per_step": trace.events_per_step,
        "rounds_per_step": _mean(rounds_measured) if rounds_measured else None,
        "rounds_per_step_estimated": trace.rounds_per_step,
        "cross_fraction": _mean(pf.cross_events) / max(1.0, _mean(pf.events)),
        "seconds_per_event": medians[SERIAL] / max(1.0, _mean(pf.events)),
        "seconds_per_step": medians[SERIAL],
    }
    # A copy added in the last round (an extension when MAX_ROUNDS is reached)
    # has no samples: it was not measured, so it is neither reported nor chosen.
    timed_candidates = [c for c in pf.candidates if c in medians]
    candidates = []
    for c in sorted(timed_candidates):
        times = pf.samples[c]
        candidates.append(
            {
                "executor": c.executor,
                "num_threads": c.num_threads,
                "predicted_s": plan.predicted.get(c.num_threads) if c != SERIAL else serial_s,
                "median_s": medians[c],
                "upper_quartile_s": quartiles[c],
                "min_s": min(times),
                "samples": len(times),
                # A median of 0 s: a clock too coarse for a tiny env's steps.
                "speedup_vs_serial": medians[SERIAL] / medians[c] if medians[c] > 0 else 1.0,
            }
        )
    allowed = [c for c in timed_candidates if executor is None or c.executor == executor]
    choice, reason = _decide(
        allowed,
        scores,
        contended=contention.contended,
        plan=plan,
        serial_s=serial_s,
        pool=Candidate(plan.best, parallel_name),
    )
    reason = f"{reason}; scored by each candidate's {score_name}"
    measured_sizes = {c.num_threads for c in timed_candidates if c != SERIAL}
    pruned = [
        {"num_threads": p, "predicted_s": s}
        for p, s in sorted(plan.predicted.items())
        if p not in measured_sizes
    ]
    pf.close()
    report = {
        "choice": {"executor": choice.executor, "num_threads": choice.num_threads},
        "source": "preflight",
        "reason": f"{reason}; static model: {plan.reason}"
        + (f", pruned x{', x'.join(str(p['num_threads']) for p in pruned)}" if pruned else ""),
        "candidates": candidates,
        "pruned": pruned,
        "trace": trace_report,
        "features": {
            **static,
            "num_envs": num_envs,
            **features,
            "load_average": _load_average(),
        },
        "load": contention.report(),
        "preflight_seconds": time.perf_counter() - start,
    }
    return Decision(choice.executor, choice.num_threads, report)
