"""Reusing a cached decision: is it allowed here, does it hold its duel, storing a new one.

A cached decision for this (model, config, machine) is re-validated once per
process by a short duel (``revalidate.py``) against its *challengers*: the
runner-up of the preflight that made it, and the cached choice's neighbours
in thread count among what that preflight measured (one size down, one up),
however they scored then (``challengers``). One that loses is replaced by a new
preflight. The neighbours are what a decision measured under load the
signals missed gets wrong: "parallel x1" with serial as its runner-up held
every duel against serial on a quiet machine where x2 ran 1.4x faster. Step
time against thread count has one minimum in practice (the preflight's hill
climb relies on it too), so a cached choice that beats both neighbours is
where that minimum is; one that does not loses to one of them. A decision
measured under contention is stored as *provisional* (``choose`` does not
reuse it on a quiet machine), and every entry expires after
``cache.MAX_AGE_S`` (``choose`` measures again).
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

# The runner-up and the two ladder neighbours: a duel of four copies at most.
MAX_CHALLENGERS = 3

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
    challengers: list[Candidate],
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
    if not challengers:
        _VALIDATED.add(memo)
        report["cache"] = {"outcome": "hit", "status": "hit (no runner-up to re-validate against)"}
        return decision
    cached = Candidate(decision.num_threads, decision.executor)
    try:
        result = revalidate.duel(
            model,
            config,
            cached,
            challengers,
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
        f"{result.runner_up.label} took {result.median_ratio:.2f}x the time of {cached.label} "
        f"(median of {result.pairs} paired steps"
        + (f"; {len(challengers)} challengers" if len(challengers) > 1 else "")
        + ")"
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
) -> tuple[Decision, list[Candidate]] | None:
    """The cached decision and its challengers, if the choice is still allowed here, else None.

    ``entry`` has the shape ``cache.valid_entry`` checks. See ``challengers``.
    """
    report = dict(entry["report"])
    name, n = report["choice"]["executor"], report["choice"]["num_threads"]
    if not _allowed(name, n, executor, max_threads):
        return None
    report["source"] = "cache"
    report["cached_at"] = entry["stored_at"]
    decision = Decision(name, n, report)
    return decision, challengers(decision, executor, max_threads)


def challengers(decision: Decision, executor: str | None, max_threads: int) -> list[Candidate]:
    """What a cached ``decision`` must still beat: at most ``MAX_CHALLENGERS`` candidates.

    Among the candidates the preflight that made it measured and that are
    allowed here: the runner-up (the best score after the choice's), then the
    cached choice's neighbours in thread count (serial below a pool of one),
    one with fewer threads and one with more, however they scored then. The
    preflight measures the sizes around the static model's optimum and hill-
    climbs past an edge, so the neighbours of what it chose were measured;
    sizes it pruned as hopeless are not tried again. Empty when nothing else
    is allowed.
    """
    name, n = decision.executor, decision.num_threads
    cached = Candidate(n, name)
    measured: dict[Candidate, float] = {}
    candidates = decision.report.get("candidates")
    for c in candidates if isinstance(candidates, list) else []:
        if not isinstance(c, dict):
            continue
        other, threads, score = c.get("executor"), c.get("num_threads"), c.get("upper_quartile_s")
        if not (isinstance(other, str) and type(threads) is int and type(score) is float):
            continue
        if _allowed(other, threads, executor, max_threads) and math.isfinite(score):
            measured[Candidate(threads, other)] = score
    measured.pop(cached, None)
    out = []
    if measured:
        out.append(min(measured, key=lambda c: (measured[c], _order(c))))
    fewer = [c for c in measured if _order(c) < _order(cached)]
    more = [c for c in measured if _order(c) > _order(cached)]
    if fewer:
        out.append(max(fewer, key=_order))
    if more:
        out.append(min(more, key=_order))
    return list(dict.fromkeys(out))[:MAX_CHALLENGERS]


def _order(c: Candidate) -> tuple[int, bool]:
    """Thread count, serial before a pool of one (as the decision rules order them)."""
    return (c.num_threads, c.executor != "serial")
