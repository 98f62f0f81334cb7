"""STPA: choose the executor and pool size of a simulation (``num_threads="auto"``).

``choose(model, config)`` answers "how should this env run on this machine?"
in this order:

1. ``SEER_NUM_THREADS`` (an int, or ``auto``) overrides everything;
2. a fixed answer when there is nothing to choose: ``executor="serial"``,
   ``check=True`` (the full contract check needs one thread) or one usable CPU
   (affinity / cgroup quota);
3. a cached decision for this (model, config, machine);
4. a preflight: a serial probe gives the trace (events, rounds, time per
   event); the static cost model (``cost_model.py``) prunes pool sizes that cannot win;
   the rest are measured on throw-away copies in interleaved blocks
   (``preflight.py``) and the lowest upper-quartile step time wins,
   preferring fewer threads within ``TIE``. The upper quartile, not the
   median, because a spinning pool degrades badly when other processes take
   its cores: a size must be fast in most steps, not just in a quiet moment.

The returned ``Decision.report`` is what ``env.runtime.stpa`` shows. See
docs/stpa.md.
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
from seer_env.stpa import cost_model, hardware
from seer_env.stpa.cache import DecisionCache, default_path, make_key
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
STPA_VERSION = 1  # bump when a decision made by an older STPA must not be reused
TIE = 0.03  # a candidate this close to the fastest counts as as fast
CONTENDED = 0.5  # CPU pressure above this during the preflight: decision not cached
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


def choose(
    model: str,
    config: dict,
    *,
    executor: str | None = None,
    check: bool = False,
    event_budget: int = 50_000_000,
    budget_s: float = DEFAULT_BUDGET_S,
    features: dict | None = None,
    cache: DecisionCache | None = None,
    num_envs: int = 1,
) -> Decision:
    """Choose executor and pool size for ``model`` with ``config`` on this machine.

    Args:
        model: registered model name (``seer_env.model_names()``).
        config: the model's config, as given to ``Simulation``.
        executor: restrict the choice to this executor (None: serial or parallel).
        check: the env runs with ``check=True`` (then one thread: see module doc).
        event_budget: the env's event budget, applied to the copies too.
        budget_s: target preflight time; at least ``MIN_ROUNDS`` rounds run.
        features: machine features (tests pass fakes); default: this machine.
        cache: the decision cache; default: ``DecisionCache(default_path())``.
        num_envs: instances stepped together as one batch (the vector env);
            the preflight then times batches of that many.
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
            "check=True: the foreign-write check is active only with one thread",
        )
    features = features or hardware.machine_features()
    max_threads = features["usable_threads"]
    cap = _contention_cap(max_threads)
    if cap is not None and cap < max_threads:
        # Other processes already keep the cores busy: a spinning pool larger
        # than what is left is preempted mid-round and stalls every barrier.
        features = dict(features, usable_threads=cap, contention_cap=cap)
        max_threads = cap
    if features["usable_threads"] <= 1 and "contention_cap" not in features:
        return _fixed(
            executor or "serial",
            1,
            "static",
            f"1 usable CPU (affinity {features['affinity_cpus']}, "
            f"cgroup quota {features['cgroup_quota_cpus']}, "
            f"contention cap {features.get('contention_cap')})",
            features=features,
        )

    cache = cache if cache is not None else DecisionCache(default_path())
    identity = {
        "stpa": STPA_VERSION,
        "seer_env": __version__,
        "model": model,
        "config": {k: float(v) for k, v in sorted(config.items())},
        "executor": executor,
        "num_envs": num_envs,
        "machine": hardware.fingerprint(features),
    }
    key = make_key(identity)
    cache_info = {"path": str(cache.path) if cache.path else None, "key": key}
    entry = cache.get(key)
    hit = _from_cache(entry, executor, max_threads)
    if hit is not None:
        hit.report["cache"] = dict(cache_info, status="hit")
        return hit

    decision = _preflight(model, config, executor, event_budget, budget_s, features, num_envs)
    pressure = hardware.cpu_pressure()
    decision.report["features"]["cpu_pressure"] = pressure
    if pressure is not None and pressure > CONTENDED:
        # Measured while other processes competed for the cores: good for
        # now, but not a decision to keep for a quieter (or busier) future.
        status = f"not stored (CPU pressure {pressure:.0%} during the preflight)"
    else:
        status = cache.put(key, {"identity": identity, "report": decision.report})
    decision.report["cache"] = dict(cache_info, status=f"miss, {status}")
    return decision


def _contention_cap(max_threads: int) -> int | None:
    """Threads left by other processes when the CPUs are contended, else None.

    Only under CPU pressure (PSI) above ``CONTENDED``; then the 1-minute load
    average minus this process's own runnable thread estimates the busy CPUs.
    """
    pressure = hardware.cpu_pressure()
    load = _load_average()
    if pressure is None or load is None or pressure <= CONTENDED:
        return None
    return max(1, max_threads - math.ceil(max(0.0, load - 1.0)))


def _from_cache(entry: dict | None, executor: str | None, max_threads: int) -> Decision | None:
    """The cached decision if it is well-formed and still allowed here, else None."""
    try:
        report = dict(entry["report"])
        name = report["choice"]["executor"]
        n = int(report["choice"]["num_threads"])
    except (TypeError, KeyError, ValueError):
        return None
    if name not in _core.executor_names() or not 1 <= n <= max_threads:
        return None
    if executor is not None and name != executor:
        return None
    report["source"] = "cache"
    return Decision(name, n, report)


def _preflight(
    model: str,
    config: dict,
    executor: str | None,
    event_budget: int,
    budget_s: float,
    features: dict,
    num_envs: int = 1,
) -> Decision:
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

    medians = pf.medians()
    scores = pf.upper_quartiles()
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
    candidates = []
    for c in sorted(pf.candidates):
        times = pf.samples[c]
        candidates.append(
            {
                "executor": c.executor,
                "num_threads": c.num_threads,
                "predicted_s": plan.predicted.get(c.num_threads) if c != SERIAL else serial_s,
                "median_s": medians[c],
                "upper_quartile_s": scores[c],
                "min_s": min(times),
                "samples": len(times),
                "speedup_vs_serial": medians[SERIAL] / medians[c],
            }
        )
    allowed = [c for c in pf.candidates if executor is None or c.executor == executor]
    choice, reason = _pick(allowed, scores)
    measured_sizes = {c.num_threads for c in pf.candidates if c != SERIAL}
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
        "preflight_seconds": time.perf_counter() - start,
    }
    return Decision(choice.executor, choice.num_threads, report)


def _pick(allowed: list[Candidate], scores: dict[Candidate, float]) -> tuple[Candidate, str]:
    """Fewest threads within ``TIE`` of the best score (serial first at one thread)."""
    order = sorted(allowed, key=lambda c: (c.num_threads, c.executor != "serial"))
    best = min(order, key=lambda c: scores[c])
    choice = next(c for c in order if scores[c] <= scores[best] * (1 + TIE))
    serial = scores[SERIAL]
    reason = (
        f"{choice.label}: upper-quartile step {scores[choice] * 1e6:.1f} us "
        f"(serial {serial * 1e6:.1f} us, {serial / scores[choice]:.2f}x)"
    )
    if choice != best:
        reason += f"; within {TIE:.0%} of the fastest, {best.label}, with fewer threads"
    return choice, reason


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
