"""``choose(model, config)``: how should this env run on this machine?

It answers in this order:

1. ``SEER_NUM_THREADS`` (an int, or ``auto``) overrides everything;
2. a fixed answer when there is nothing to choose: ``executor="serial"``,
   ``check=True`` (a checked step runs one handler at a time) or one usable CPU
   (affinity / cgroup quota);
3. a cached decision for this (model, config, machine), re-validated once per
   process: a short duel against its challengers, the runner-up of the
   preflight that made it and the choice's neighbours on the thread ladder
   (``reuse.py``, ``revalidate.py``); losing sends it to step 4. A
   *provisional* entry (measured under contention) is not reused on a quiet
   machine, and no entry after ``cache.MAX_AGE_S``;
4. a preflight (``measure.py``): a serial probe, the static cost model's
   pruning, the remaining pool sizes measured on throw-away copies, and the
   decision rules (``rules.py``): the fewest threads within ``TIE`` of the
   best upper-quartile step on a quiet machine. A decision measured under
   contention is stored as provisional only, and is scored by each
   candidate's fastest step instead: what a size does when the load lets it.
   Such a pool starts on one thread (``start_on_one_thread`` in the report:
   the serial loop, as after a shed the load confirmed) and its adaptive pool
   probes more threads now and then, skipping probes while one-thread steps
   lose their core: so a busy machine pays about a serial step's CPU time,
   while a one-thread choice could never use the cores the load leaves free
   once it goes. More
   threads than the fastest needs are taken only where the static model
   predicts that some pool pays on free cores (not for a tiny env).

The returned ``Decision.report`` is what ``env.runtime.stpa`` shows; its
``cache`` part says where the cache file is and what became of the decision
(``outcome``). See docs/stpa.md.
"""

from __future__ import annotations

import os

from seer_env._version import __version__
from seer_env.model_source import ModelSource, model_key
from seer_env.stpa import hardware, load
from seer_env.stpa.cache import ENV_VAR as CACHE_ENV_VAR
from seer_env.stpa.cache import MAX_AGE_S, DecisionCache, default_path, expired, make_key
from seer_env.stpa.decision import Decision, fixed
from seer_env.stpa.load import LoadSignal
from seer_env.stpa.measure import DEFAULT_BUDGET_S, _preflight
from seer_env.stpa.reuse import _from_cache, _revalidated, _store
from seer_env.stpa.threads import AUTO, ENV_VAR, default_executor, parse_num_threads

# The decision logic's version, part of every cache key: bump it when the
# decisions an older STPA stored must not be reused.
STPA_VERSION = 2


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
            first-steps checks (``check_steps``) do not count: those steps alone run
            one handler at a time.
        event_budget: the env's event budget, applied to the copies too.
        budget_s: target preflight time; at least ``measure.MIN_ROUNDS`` rounds run.
        features: machine features (tests pass fakes); default: this machine.
        cache: the decision cache; default: ``DecisionCache(default_path())``.
        num_envs: instances stepped together as one batch (the vector env);
            the preflight then times batches of that many.
        load_signal: reads the machine's load (tests pass a
            ``load.SimulatedLoad``); default: ``load.default_signal()``.
    """
    override = os.environ.get(ENV_VAR)
    if override is not None and override.strip():
        n = parse_num_threads(override, ENV_VAR, from_environment=True)
        if n != AUTO:
            chosen = executor or default_executor(n)
            if chosen == "serial":
                n = 1
            return fixed(chosen, n, ENV_VAR, f"{ENV_VAR}={override.strip()}")
    if executor == "serial":
        return fixed("serial", 1, "static", "executor='serial' runs on one thread")
    if check:
        return fixed(
            executor or "serial",
            1,
            "static",
            "check=True: every step runs one handler at a time (the foreign-write check)",
        )
    signal = load_signal if load_signal is not None else load.default_signal()
    now = signal.now()
    features = features or hardware.machine_features()
    max_threads = features["usable_threads"]
    # No cap on the pool under load (a cap at PSI avg10 > 50% would force one
    # thread where 2 still pay, e.g. Aircraft 1024 beside one busy process per
    # core): the preflight measures, and the adaptive pool sheds threads at
    # run time while the load lasts.
    if max_threads <= 1:
        return fixed(
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
    elif entry is not None and expired(entry):
        # However it was measured, it is not reused forever: a decision made
        # under a load the signals missed, held by noise, goes in time too.
        entry, skipped = None, f"entry older than {MAX_AGE_S / 86400:g} days"
    elif entry is not None and entry["provisional"] and not now.contended:
        # Measured under load: it says nothing about this quiet machine.
        entry, skipped = None, "provisional entry (measured under load) on a quiet machine"
    hit = _from_cache(entry, executor, max_threads) if entry is not None else None
    if entry is not None and hit is None:
        skipped = "the cached choice is not allowed here"
    memo = (str(cache.path), key)
    duel_info: dict = {}
    if hit is not None:
        cached, rivals = hit
        kept = _revalidated(cached, rivals, memo, model, config, event_budget, num_envs, signal)
        if kept is not None:
            kept.report["cache"] = dict(cache_info, **kept.report["cache"])
            return _starting_on_one_thread(kept, now)
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
    return _starting_on_one_thread(decision, now)


def _starting_on_one_thread(decision: Decision, now: load.Contention) -> Decision:
    """Marks a pool chosen or reused while the CPUs were busy to start on one thread.

    Sets ``report["start_on_one_thread"]`` (the reason, which the env hands to
    ``Simulation.start_on_one_thread``) when the decision runs the parallel
    executor on more than one thread and its preflight was contended, or the
    machine is contended now. Beside busy processes such a pool's first steps
    stall, then run in rounds on one thread (~1.3x a serial step) until a
    probe confirms the load; starting as after that probe costs a serial
    step, and the probes still find the cores when the load goes.
    """
    if decision.executor != "parallel" or decision.num_threads < 2:
        return decision
    measured = decision.report.get("load") or {}
    if measured.get("contended"):
        why = "; ".join(measured.get("reasons") or ()) or "contended"
    elif now.contended:
        why = now.summary()
    else:
        return decision
    decision.report["start_on_one_thread"] = f"chosen while the CPUs were busy ({why})"
    return decision
