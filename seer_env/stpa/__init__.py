"""STPA: choose the executor and pool size of a simulation (``num_threads="auto"``).

``choose(model, config)`` answers "how should this env run on this machine?"
in this order:

1. ``SEER_NUM_THREADS`` (an int, or ``auto``) overrides everything;
2. a fixed answer when there is nothing to choose: ``executor="serial"``,
   ``check=True`` (a checked step runs one handler at a time) or one usable CPU
   (affinity / cgroup quota);
3. a cached decision for this (model, config, machine), re-validated once per
   process: a short duel against the runner-up of the preflight that made it
   (``revalidate.py``); losing sends it to step 4. A *provisional* entry
   (measured under contention) is not reused on a quiet machine;
4. a preflight: a serial probe gives the trace (events, rounds, time per
   event); the static cost model (``cost_model.py``) prunes pool sizes that cannot win;
   the rest are measured on throw-away copies in interleaved blocks
   (``preflight.py``) and the lowest upper-quartile step time wins,
   preferring fewer threads within ``TIE``. The upper quartile, not the
   median, because a spinning pool degrades badly when other processes take
   its cores: a size must be fast in most steps, not just in a quiet moment.
   The machine's load is read around it (``load.py``); a decision measured
   under contention is stored as provisional only, and is scored by each
   candidate's fastest step instead: what a size does when the load lets it.
   Its downside under load is the adaptive pool's job at run time (it sheds
   to the serial loop within a step or two and probes back), while a
   one-thread choice could never use the cores the load leaves free. More
   threads than the fastest needs are taken only where the static model
   predicts that some pool pays on free cores (not for a tiny env).

The returned ``Decision.report`` is what ``env.runtime.stpa`` shows; its
``cache`` part says where the cache file is and what became of the decision
(``outcome``). See docs/stpa.md.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
import warnings
from typing import Any

from seer_env import _core
from seer_env._version import __version__
from seer_env.model_source import ModelSource, model_key
from seer_env.stpa import cost_model, hardware, load, revalidate
from seer_env.stpa.cache import ENV_VAR as CACHE_ENV_VAR
from seer_env.stpa.cache import DecisionCache, default_path, make_key
from seer_env.stpa.load import LoadSignal
from seer_env.stpa.preflight import SERIAL, Candidate, Preflight

__all__ = [
    "AUTO",
    "Decision",
    "OversubscriptionWarning",
    "choose",
    "parse_num_threads",
    "warn_if_oversubscribed",
]

AUTO = "auto"
# Bump when a decision made by an older STPA must not be reused. 2: decisions
# of version 1 may have been measured under load (only PSI avg10 > 50% kept
# one out of the cache).
STPA_VERSION = 2
TIE = 0.03  # a candidate this close to the fastest counts as as fast
DEFAULT_BUDGET_S = 0.25  # target preflight time (at least MIN_ROUNDS rounds run regardless)
MIN_ROUNDS = 2
MAX_ROUNDS = 8
MAX_EXTENSIONS = 2  # hill-climb steps beyond the static model's candidates
PREFLIGHT_SEED = 0x57BA  # the copies' own seed: never the env's
_ENV_VAR = "SEER_NUM_THREADS"


def parse_num_threads(value: Any, name: str = "num_threads") -> int | str:
    """Return ``"auto"`` or an int in [1, max_num_threads()]; ValueError naming ``name``.

    ``seer_env._core.max_num_threads()``: 8 per usable CPU, at least 64.
    """
    if isinstance(value, str):
        if value.strip().lower() == AUTO:
            return AUTO
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError(f'{name} must be "auto" or an integer, got {value!r}') from None
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ValueError(f'{name} must be "auto" or an integer, got {value!r}')
    value = int(value.__index__())
    most = _core.max_num_threads()
    if not 1 <= value <= most:
        raise ValueError(
            f'{name} must be "auto" or in [1, {most}] (8 per usable CPU, at least 64), got {value}'
        )
    return value


class OversubscriptionWarning(RuntimeWarning):
    """An explicit pool larger than the CPUs this process may use."""


def _user_stacklevel() -> int:
    """``stacklevel`` for a warning raised here that names the first caller outside seer_env."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1  # level 1: the function calling warnings.warn
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def warn_if_oversubscribed(num_threads: int) -> None:
    """Warn when ``num_threads`` exceeds the usable CPUs (affinity, cgroup quota).

    Workers spin at every round's barrier; with more of them than CPUs they
    are preempted mid-round and a step can take several times longer (PCS
    64x64 on 2 CPUs: 4 threads 4-6x slower than 2).
    """
    usable = hardware.usable_threads()
    if num_threads > usable:
        warnings.warn(
            f"num_threads={num_threads} exceeds the {usable} CPU(s) this process may use: "
            "worker threads spin at every round's barrier and get preempted, so steps "
            f'can be several times slower. Use num_threads="auto" or at most {usable}.',
            OversubscriptionWarning,
            stacklevel=_user_stacklevel(),
        )


def default_executor(num_threads: int) -> str:
    """The executor an explicit pool size means when no executor is named."""
    return "serial" if num_threads == 1 else "parallel"


@dataclasses.dataclass(frozen=True)
class Decision:
    """How to run: ``executor`` with ``num_threads``, and why (``report``, JSON-ready)."""

    executor: str
    num_threads: int
    report: dict


def _fixed(executor: str, num_threads: int, source: str, reason: str, **extra) -> Decision:
    report = {
        "choice": {"executor": executor, "num_threads": num_threads},
        "source": source,
        "reason": reason,
        **extra,
    }
    return Decision(executor, num_threads, report)


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


# (cache file, key) of entries this process already re-validated or stored:
# later envs of the same config here reuse them without another duel.
_VALIDATED: set[tuple[str, str]] = set()


def choose(
    model: ModelSource,
    config: dict,
    *,
    executor: str | None = None,
    check: bool = False,
    event_budget: int = 50_000_000,
    budget_s: float = DEFAULT_BUDGET_S,
    features: dict | None = None,
    cache: DecisionCache | None = None,
    num_envs: int = 1,
    load_signal: LoadSignal | None = None,
) -> Decision:
    """Choose executor and pool size for ``model`` with ``config`` on this machine.

    Args:
        model: registered model name (``seer_env.model_names()``) or a compiled
            ``NumbaModel`` subclass (``seer_env.model_source``).
        config: the model's config, as given to ``Simulation``.
        executor: restrict the choice to this executor (None: serial or parallel).
        check: the env runs with ``check=True`` (then one thread: see module doc). The
            first-steps checks (``check_steps``) do not count: they run on a serial
            stand-in for those steps only.
        event_budget: the env's event budget, applied to the copies too.
        budget_s: target preflight time; at least ``MIN_ROUNDS`` rounds run.
        features: machine features (tests pass fakes); default: this machine.
        cache: the decision cache; default: ``DecisionCache(default_path())``.
        num_envs: instances stepped together as one batch (the vector env);
            the preflight then times batches of that many.
        load_signal: reads the machine's load (tests pass a
            ``load.SimulatedLoad``); default: ``load.default_signal()``.
    """
    override = os.environ.get(_ENV_VAR)
    if override is not None and override.strip():
        n = parse_num_threads(override, _ENV_VAR)
        if n != AUTO:
            chosen = executor or default_executor(n)
            if chosen == "serial":
                n = 1
            return _fixed(chosen, n, _ENV_VAR, f"{_ENV_VAR}={override.strip()}")
    if executor == "serial":
        return _fixed("serial", 1, "static", "executor='serial' runs on one thread")
    if check:
        return _fixed(
            executor or "serial",
            1,
            "static",
            "check=True: every step runs one handler at a time (the foreign-write check)",
        )
    signal = load_signal if load_signal is not None else load.default_signal()
    now = signal.now()
    features = features or hardware.machine_features()
    max_threads = features["usable_threads"]
    # No cap on the pool under load (there was one, at PSI avg10 > 50%: it
    # forced one thread where 2 still paid, e.g. Aircraft 1024 beside one busy
    # process per core): the preflight measures, and the adaptive pool sheds
    # threads at run time while the load lasts.
    if max_threads <= 1:
        return _fixed(
            executor or "serial",
            1,
            "static",
            f"1 usable CPU (affinity {features['affinity_cpus']}, "
            f"cgroup quota {features['cgroup_quota_cpus']})",
            features=features,
        )

    cache = cache if cache is not None else DecisionCache(default_path())
    identity = {
        "stpa": STPA_VERSION,
        "seer_env": __version__,
        "model": model_key(model),
        "config": {k: float(v) for k, v in sorted(config.items())},
        "executor": executor,
        "num_envs": num_envs,
        "machine": hardware.fingerprint(features),
    }
    key = make_key(identity)
    cache_info = {
        "path": str(cache.path) if cache.path else None,  # None: caching is off
        "key": key,
        "disable_with": f"{CACHE_ENV_VAR}=off",
    }
    entry = cache.get(key)
    skipped = None  # why an entry was not reused
    if entry is not None and entry["identity"] != identity:
        entry, skipped = None, "another identity under this key"
    elif entry is not None and entry["provisional"] and not now.contended:
        # Measured under load: it says nothing about this quiet machine.
        entry, skipped = None, "provisional entry (measured under load) on a quiet machine"
    hit = _from_cache(entry, executor, max_threads) if entry is not None else None
    if entry is not None and hit is None:
        skipped = "the cached choice is not allowed here"
    memo = (str(cache.path), key)
    duel_info: dict = {}
    if hit is not None:
        cached, runner_up = hit
        kept = _revalidated(cached, runner_up, memo, model, config, event_budget, num_envs, signal)
        if kept is not None:
            kept.report["cache"] = dict(cache_info, **kept.report["cache"])
            return kept
        duel_info = cached.report["cache"]

    decision = _preflight(
        model, config, executor, event_budget, budget_s, features, num_envs, signal
    )
    decision.report["features"]["cpu_pressure"] = now.cpu_pressure
    stored = _store(cache, key, identity, decision, memo)
    if duel_info:
        stored.update(
            outcome="replaced",
            status=f"{duel_info['status']}; {stored['status']}",
            revalidation=duel_info["revalidation"],
        )
    elif skipped:
        stored["status"] = f"miss ({skipped}), {stored['status']}"
    else:
        stored["status"] = f"miss, {stored['status']}"
    decision.report["cache"] = dict(cache_info, **stored)
    return decision


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
        return _fixed(
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
                "speedup_vs_serial": medians[SERIAL] / medians[c],
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


def _decide(
    allowed: list[Candidate],
    scores: dict[Candidate, float],
    *,
    contended: bool,
    plan: cost_model.Plan,
    serial_s: float,
    pool: Candidate,
) -> tuple[Candidate, str]:
    """The preflight's choice among the measured ``allowed`` candidates, and why.

    ``pool`` is the static model's predicted optimum (``plan.best`` threads).
    """
    # Pool sizes the static model (load-free) predicts to beat serial.
    paying = {p for p, seconds in plan.predicted.items() if p > 1 and seconds < serial_s}
    if contended and plan.best in paying and pool in allowed:
        # Under load the optimum's preflight copy measures the first steps,
        # which stall before the adaptive pool sheds; at run time the pool
        # sheds within a step or two and steps at the serial loop's speed or
        # better while the load lasts, and uses every core when it goes.
        reason = (
            f"{pool.label}: the static model's optimum, measured under contention "
            f"(fastest step {scores[pool] * 1e6:.1f} us, "
            f"serial {scores[SERIAL] * 1e6:.1f} us); "
            "the adaptive pool sheds threads while the load lasts"
        )
        return pool, reason
    if contended and paying:
        return _pick_contended(allowed, scores)
    # Quiet, or contended where the static model predicts that no pool pays
    # even on free cores (a tiny env): the fewest threads within TIE.
    return _pick(allowed, scores)


def _pick(allowed: list[Candidate], scores: dict[Candidate, float]) -> tuple[Candidate, str]:
    """Fewest threads within ``TIE`` of the best score (serial first at one thread)."""
    order = sorted(allowed, key=lambda c: (c.num_threads, c.executor != "serial"))
    best = min(order, key=lambda c: scores[c])
    choice = next(c for c in order if scores[c] <= scores[best] * (1 + TIE))
    serial = scores[SERIAL]
    reason = (
        f"{choice.label}: step {scores[choice] * 1e6:.1f} us "
        f"(serial {serial * 1e6:.1f} us, {serial / scores[choice]:.2f}x)"
    )
    if choice != best:
        reason += f"; within {TIE:.0%} of the fastest, {best.label}, with fewer threads"
    return choice, reason


def _pick_contended(
    allowed: list[Candidate], scores: dict[Candidate, float], tie: float = TIE
) -> tuple[Candidate, str]:
    """Under contention: the MOST threads within ``tie`` of the best score.

    The adaptive pool sheds threads at run time while the load lasts (a
    preflight copy of 2 threads may already have shed, so it ties with serial),
    but a one-thread choice never uses a core the load leaves free.
    """
    order = sorted(allowed, key=lambda c: (c.num_threads, c.executor != "serial"))
    best = min(order, key=lambda c: scores[c])
    choice = [c for c in order if scores[c] <= scores[best] * (1 + tie)][-1]
    serial = scores[SERIAL]
    reason = (
        f"{choice.label}: step {scores[choice] * 1e6:.1f} us "
        f"(serial {serial * 1e6:.1f} us, {serial / scores[choice]:.2f}x)"
    )
    if choice != best:
        reason += (
            f"; within {tie:.0%} of the fastest, {best.label}, with more threads "
            "(contended: the adaptive pool sheds them while the load lasts)"
        )
    return choice, reason


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
