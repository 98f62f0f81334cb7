"""Reusing a cached decision: is it allowed here, does it hold its duel, storing a new one.

A cached decision for this (model, config, machine) is re-validated once per
process by a short duel against the runner-up of the preflight that made it
(``revalidate.py``); one that loses is replaced by a new preflight. A
decision measured under contention is stored as *provisional* (``choose``
does not reuse it on a quiet machine).
"""

from __future__ import annotations

import math

from seer_env import _core
from seer_env.model_source import ModelSource
from seer_env.stpa import revalidate
from seer_env.stpa.cache import DecisionCache
from seer_env.stpa.decision import Decision
from seer_env.stpa.load import LoadSignal
from seer_env.stpa.measure import PREFLIGHT_SEED
from seer_env.stpa.preflight import Candidate

# (cache file, key) of entries this process already re-validated or stored:
# later envs of the same config here reuse them without another duel.
_VALIDATED: set[tuple[str, str]] = set()


def _store(
    cache: DecisionCache, key: str, identity: dict, decision: Decision, memo: tuple[str, str]
) -> dict:
    """Store a preflight's decision (provisional if it was contended); outcome and status."""
    contended = decision.report.get("load", {}).get("contended", False)
    status = cache.put(
        key, {"identity": identity, "report": decision.report}, provisional=contended
    )
    if status != "stored":
        outcome = "not stored"
    else:
        # Just measured: later envs here reuse it without a duel (a provisional
        # one only while the CPUs stay contended, as any provisional entry).
        _VALIDATED.add(memo)
        outcome = "provisional" if contended else "stored"
        if contended:
            status = "stored as provisional (not reused on a quiet machine)"
    if contended:
        status += f"; measured under contention: {'; '.join(decision.report['load']['reasons'])}"
    return {"outcome": outcome, "status": status}


def _revalidated(
    decision: Decision,
    runner_up: Candidate | None,
    memo: tuple[str, str],
    model: ModelSource,
    config: dict,
    event_budget: int,
    num_envs: int,
    signal: LoadSignal,
) -> Decision | None:
    """The cached ``decision`` if it holds (or need not be checked), None if it lost.

    Sets ``decision.report["cache"]`` (outcome, status, the duel's report).
    """
    report = decision.report
    if memo in _VALIDATED:
        report["cache"] = {"outcome": "hit", "status": "hit (re-validated earlier in this process)"}
        return decision
    if runner_up is None:
        _VALIDATED.add(memo)
        report["cache"] = {"outcome": "hit", "status": "hit (no runner-up to re-validate against)"}
        return decision
    cached = Candidate(decision.num_threads, decision.executor)
    try:
        result = revalidate.duel(
            model,
            config,
            cached,
            runner_up,
            seed=PREFLIGHT_SEED,
            signal=signal,
            event_budget=event_budget,
            num_envs=num_envs,
        )
    except Exception as exc:  # noqa: BLE001 - the env's own run will raise it where it matters
        report["cache"] = {
            "outcome": "hit",
            "status": f"hit (re-validation failed: {type(exc).__name__}: {exc})",
        }
        return decision
    versus = (
        f"{runner_up.label} took {result.median_ratio:.2f}x the time of {cached.label} "
        f"(median of {result.pairs} paired steps)"
    )
    report["cache"] = {"revalidation": result.report()}
    if result.held:
        _VALIDATED.add(memo)
        report["cache"].update(outcome="revalidated", status=f"hit, re-validated: {versus}")
        return decision
    report["cache"].update(outcome="replaced", status=f"hit, lost its re-validation: {versus}")
    return None


def _allowed(executor: str, num_threads: int, wanted: str | None, max_threads: int) -> bool:
    return (
        executor in _core.executor_names()
        and 1 <= num_threads <= max_threads
        and (wanted is None or executor == wanted)
    )


def _from_cache(
    entry: dict, executor: str | None, max_threads: int
) -> tuple[Decision, Candidate | None] | None:
    """The cached decision and its runner-up, if the choice is still allowed here, else None.

    ``entry`` has the shape ``cache.valid_entry`` checks. The runner-up is the
    best-scoring other candidate of the preflight that made the decision and
    is allowed here (None when there is none: nothing to re-validate against).
    """
    report = dict(entry["report"])
    name, n = report["choice"]["executor"], report["choice"]["num_threads"]
    if not _allowed(name, n, executor, max_threads):
        return None
    report["source"] = "cache"
    report["cached_at"] = entry["stored_at"]
    best = None
    candidates = report.get("candidates")
    for c in candidates if isinstance(candidates, list) else []:
        if not isinstance(c, dict):
            continue
        other, threads, score = c.get("executor"), c.get("num_threads"), c.get("upper_quartile_s")
        if not (isinstance(other, str) and type(threads) is int and type(score) is float):
            continue
        if (other, threads) == (name, n) or not _allowed(other, threads, executor, max_threads):
            continue
        if math.isfinite(score) and (best is None or score < best[0]):
            best = (score, Candidate(threads, other))
    return Decision(name, n, report), best[1] if best else None
