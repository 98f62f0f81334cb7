"""``verify``: every check a model (or a port of a prototype) needs, in one call.

``verify(port, prototype)`` takes, for each, a registered C++ model name, a
``PythonModel`` or ``NumbaModel`` class (compiled or not) or an env factory,
and runs, over several seeds:

1. declarations: the port and the prototype declare the same parameters, keys
   and state record (``assert_declarations_match``);
2. contract: ``check_contract`` on each (checked mode: writes to other
   entities, early cross-entity events, handler errors, outputs outside their
   spaces, non-determinism); then the port's coverage: how often each hook
   (``on_init``, ``on_step_begin``, ``on_action``) and each declared event
   kind ran, a warning (not a failure) naming any that never ran, since no
   check tests code that no run reaches;
3. serial equivalence: every executor and thread count against serial, on
   outputs AND on every entity state, pending event and the digest (a model
   that runs serially only, a ``PythonModel`` or an interpreted
   ``NumbaModel``: checked mode against unchecked mode, the rest skipped and
   said so);
4. reset: one env reused across the seeds against a fresh env per seed
   (state left over from the last episode, a ``reset_states`` that does not
   re-initialise);
5. interpreted vs compiled, for a compiled ``NumbaModel``: the same class in
   both modes, states, events and digest included;
6. prototype vs port: outputs and totals, and, when their state layouts
   agree, every entity state and pending event after every step (a reordered
   floating-point expression shows here long before it reaches an output),
   and the digest when their snapshot records agree too.

Every env built must report in ``env.runtime`` the executor and thread count
it was asked for: an env factory that ignores them fails instead of comparing
serial with serial.

A difference is reported where it first appears: the step, then the entity and
state field (named by the declared state record), the pending event, or the
output and agent, with both values (floats with their bits).
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from seer_env import _core
from seer_env.model_source import is_numba_model
from seer_env.models.numba import NumbaModel
from seer_env.models.numba.kernel import numba_available
from seer_env.models.python_model import PythonModel
from seer_env.testing.arguments import compared_executors, seed_list, step_count, thread_counts
from seer_env.testing.contract import Coverage, check_contract
from seer_env.testing.declaration import declaration_difference, declaration_of
from seer_env.testing.equivalence import _spaces_difference, require_runtime, serial_only_reason
from seer_env.testing.trajectory import (
    Policy,
    _frame,
    _show,
    first_difference,
    random_policy,
    skip_first_step_checks,
)
from seer_env.testing.trajectory import step_outputs as _step_outputs

__all__ = ["Check", "VerifyReport", "verify"]

Model = str | type[PythonModel] | type[NumbaModel] | Callable[..., Any]

_EVENT_FIELDS = ("time", "target", "kind", "source", "seq")


@dataclasses.dataclass
class Check:
    """One check of ``verify``: its name, outcome and what it found."""

    name: str
    status: str  # "ok", "failed", "skipped" or "warning" (passed, but see the detail)
    detail: str = ""

    def __str__(self) -> str:
        marks = {"ok": "ok     ", "failed": "FAILED ", "skipped": "skipped", "warning": "WARNING"}
        mark = marks[self.status]
        return f"  {mark} {self.name}" + (f": {self.detail}" if self.detail else "")


@dataclasses.dataclass
class VerifyReport:
    """What ``verify`` found; ``ok`` when no check failed."""

    checks: list[Check] = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when no check failed (skipped checks say why they were skipped)."""
        return all(c.status != "failed" for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if c.status == "failed"]

    @property
    def warnings(self) -> list[Check]:
        """The checks that passed with a warning (e.g. code that no run reached)."""
        return [c for c in self.checks if c.status == "warning"]

    def __str__(self) -> str:
        verdict = "passed" if self.ok else f"{len(self.failures)} check(s) failed"
        if self.warnings:
            verdict += f" with {len(self.warnings)} warning(s)"
        lines = [f"verify: {verdict} ({self.seconds:.1f} s)"]
        lines += [str(c) for c in self.checks]
        return "\n".join(lines)


# -- building envs --------------------------------------------------------------------------------
def _is_model_class(model) -> bool:
    return isinstance(model, type) and issubclass(model, (PythonModel, NumbaModel))


def _env_fn(model: Model, config: Mapping[str, Any] | None) -> Callable[..., Any]:
    """``model`` as an env factory taking ``executor``, ``num_threads``, ``check``.

    A name or a model class runs in ``SeerParallelEnv`` with ``config``; an
    env factory receives ``config``'s entries as keywords beside the runtime's.
    """
    from seer_env.env import SeerParallelEnv  # noqa: PLC0415 (env imports the testing kit's deps)

    if isinstance(model, str) or _is_model_class(model):
        return lambda **kw: SeerParallelEnv(model, dict(config or {}), **kw)
    if callable(model) and not isinstance(model, type):
        if config:
            return lambda **kw: model(**dict(config), **kw)
        return model
    raise ValueError(
        "model must be a registered name, a PythonModel or NumbaModel subclass or an env "
        f"factory, got {model!r}"
    )


def _unwrapped(env):
    return getattr(env, "unwrapped", env)


def _model_of(env) -> str | type | None:
    return getattr(_unwrapped(env), "_model", None)


def _declaration(env) -> dict[str, Any] | None:
    model = _model_of(env)
    if isinstance(model, str) or _is_model_class(model):
        return declaration_of(model)
    return None


def _public_record(env) -> np.dtype | None:
    """The snapshot record of ``env``'s model (a PythonModel's: its ``public_fields``)."""
    model = _model_of(env)
    if isinstance(model, type) and issubclass(model, PythonModel):
        state = np.dtype(model.state_dtype)
        names = list(state.names if model.public_fields is None else model.public_fields)
        return np.dtype([(n, state.fields[n][0]) for n in names])
    declared = (_declaration(env) or {}).get("records", {}).get("public")
    return None if declared is None else np.dtype(declared)


def _close(env) -> None:
    close = getattr(env, "close", None)
    if close is not None:
        close()


def _open(env_fn, **options):
    """``env_fn(**options)``, checked to run what was asked (``env.runtime``).

    An env factory that drops ``executor`` or ``num_threads`` would compare
    serial with serial and pass without testing anything.
    """
    env = env_fn(**options)
    try:
        require_runtime(env, options.get("executor", "serial"), options.get("num_threads", 1))
        check = getattr(_unwrapped(env).sim, "check", None) if hasattr(env, "unwrapped") else None
        if "check" in options and check is not None and bool(check) != options["check"]:
            raise AssertionError(
                f"env_fn(check={options['check']!r}) built an env with check={check!r}: env_fn "
                "must pass the keyword to the env"
            )
    except BaseException:
        _close(env)
        raise
    return env


# -- recording: outputs, entity states and pending events after every step ------------------------
@dataclasses.dataclass
class _Layout:
    """How to read a model's entity states and name its event kinds."""

    state: np.dtype  # the declared state record, or raw bytes
    kinds: list[str]
    public: np.dtype | None  # the snapshot record, when known
    serial_only: str | None  # why the model runs serially only, or None

    @classmethod
    def of(cls, env_fn) -> _Layout:
        """The layout of ``env_fn``'s model."""
        env = _open(env_fn, executor="serial", num_threads=1)
        try:
            env.reset(seed=0)  # states are read after a reset, as the runtime does
            sim = _unwrapped(env).sim
            size = sim.entity_states().shape[1]
            declared = (_declaration(env) or {}).get("records", {}).get("state")
            dtype = np.dtype(declared) if declared is not None else None
            if dtype is None or dtype.itemsize != size:
                dtype = np.dtype([("bytes", "u1", (size,))])
            kinds = list(sim.spec["event_kinds"])
            return cls(dtype, kinds, _public_record(env), serial_only_reason(env))
        finally:
            _close(env)


def _capture(env, outputs: dict, layout: _Layout) -> dict:
    sim = _unwrapped(env).sim
    frame = _frame(env, outputs, digest=True)
    frame["totals"] = sim.totals()
    frame["entity_states"] = np.ascontiguousarray(sim.entity_states()).view(layout.state)
    frame["entity_states"] = frame["entity_states"].reshape(-1)
    frame["pending_events"] = sim.pending_events()
    return frame


def _trace(env, seed, steps, layout, policy=None, actions=None):
    """Reset with ``seed`` and run; returns ``(frames, actions)`` with states and events."""
    policy = policy or random_policy
    observations, infos = env.reset(seed=seed)
    skip_first_step_checks(env)  # the contract check is check_contract's
    frames = [("reset", _capture(env, {"observations": observations, "infos": infos}, layout))]
    used = []
    for step in range(steps):
        if not env.agents or (actions is not None and step >= len(actions)):
            break
        act = actions[step] if actions is not None else policy(seed, step, env)
        used.append(act)
        outputs = _step_outputs(env.step(act))
        frames.append((f"step {step + 1}", _capture(env, outputs, layout)))
    return frames, used


# -- locating a difference ------------------------------------------------------------------------
def _state_difference(a: np.ndarray, b: np.ndarray) -> str | None:
    if a.tobytes() == b.tobytes():
        return None
    if a.shape != b.shape:
        return f"entity states: {a.shape[0]} entities != {b.shape[0]}"
    for entity in range(a.shape[0]):
        if a[entity].tobytes() == b[entity].tobytes():
            continue
        for field in a.dtype.names:
            va, vb = a[entity][field], b[entity][field]
            if np.asarray(va).tobytes() != np.asarray(vb).tobytes():
                if field == "bytes":  # no declared record: the first byte that differs
                    i = int(np.flatnonzero(np.asarray(va) != np.asarray(vb))[0])
                    return f"entity {entity} state byte {i}: {int(va[i])} != {int(vb[i])}"
                if np.ndim(va) == 0 and isinstance(va, np.integer | np.bool_):
                    va, vb = va.item(), vb.item()
                return f"entity {entity} state field {field!r}: {_show(va)} != {_show(vb)}"
    return "entity states differ"  # not reached: some field differs


def _event(events: dict, i: int, kinds: list[str]) -> str:
    kind = int(events["kind"][i])
    name = kinds[kind] if kind < len(kinds) else str(kind)
    return (
        f"(time={_show(float(events['time'][i]))}, target={int(events['target'][i])}, "
        f"kind={name!r}, source={int(events['source'][i])}, seq={int(events['seq'][i])})"
    )


def _pending_difference(a: dict, b: dict, kinds: list[str]) -> str | None:
    n_a, n_b = len(a["time"]), len(b["time"])
    for i in range(min(n_a, n_b)):
        if any(a[f][i].tobytes() != b[f][i].tobytes() for f in _EVENT_FIELDS):
            first, second = _event(a, i, kinds), _event(b, i, kinds)
            return f"pending event #{i} (in key order): {first} != {second}"
    if n_a != n_b:
        longer, which = (a, "first") if n_a > n_b else (b, "second")
        i = min(n_a, n_b)
        return (
            f"pending events: {n_a} != {n_b}; the first extra one (in the {which} run): "
            f"{_event(longer, i, kinds)}"
        )
    return None


def _frame_difference(
    a: dict, b: dict, layout: _Layout, compare_state: bool, compare_digest: bool
) -> list[str]:
    """Every kind of difference between two frames, state first (where bugs start)."""
    found = []
    if compare_state:
        found.append(_state_difference(a["entity_states"], b["entity_states"]))
        found.append(_pending_difference(a["pending_events"], b["pending_events"], layout.kinds))
    skip = ("entity_states", "pending_events", "digest")
    outputs_a = {k: v for k, v in a.items() if k not in skip}
    outputs_b = {k: v for k, v in b.items() if k not in skip}
    found.append(first_difference(outputs_a, outputs_b))
    found = [f for f in found if f]
    if compare_digest and not found and a.get("digest") != b.get("digest"):
        found.append(
            f"digest {a.get('digest'):#018x} != {b.get('digest'):#018x}: states, pending events "
            "and outputs are equal; the snapshot, the random streams' positions, event sequence "
            "counters or payloads differ"
        )
    return found


def _compare(
    reference, other, layout: _Layout, compare_state: bool = True, compare_digest: bool = True
) -> str | None:
    for (name, a), (_, b) in zip(reference, other):
        found = _frame_difference(a, b, layout, compare_state, compare_digest and compare_state)
        if found:
            note = ""
            outputs_equal = all(not f.startswith("[") for f in found)
            if compare_state and outputs_equal:
                note = " (outputs still equal)"
            return f"at {name}{note}: " + "; ".join(found[:3])
    if len(reference) != len(other):
        return f"at the end: {len(reference)} frames != {len(other)} frames"
    return None


# -- the checks -----------------------------------------------------------------------------------
def _contract(
    name: str, env_fn, seeds, steps, policy, interpreted_fn=None, coverage: list | None = None
) -> Check:
    report = check_contract(env_fn, seeds=seeds, steps=steps, policy=policy, strict=False)
    if coverage is not None:
        coverage.append(report.coverage)
    if report.ok:
        return Check(name, "ok", f"{report.seeds} seeds, {report.steps} steps")
    lines = []
    for v in report.violations[:3]:
        where = f"seed {v.seed}, " + ("reset" if v.step == 0 else f"step {v.step}")
        lines.append(f"[{v.rule}] {where}: {v.message}")
    first = report.violations[0]
    if interpreted_fn is not None and "changed during the step" in first.message:
        # The runtime sees only that the snapshot changed; interpreted, the
        # snapshot is a read-only array, so the write itself raises, located.
        located = check_contract(
            interpreted_fn, seeds=(first.seed,), steps=steps, policy=policy, strict=False
        )
        handler = next((v for v in located.violations if v.rule == "handler"), None)
        if handler is not None:
            lines.insert(1, f"the same seed interpreted (compiled=False): {handler.message}")
    return Check(name, "failed", "; ".join(lines))


def _coverage(name: str, coverage: Coverage | None, seeds, steps: int) -> Check:
    """What the contract runs exercised; a warning naming each hook or event kind never run.

    Code no run reaches is code no check tested: a porting bug there passes
    every comparison.
    """
    if coverage is None:
        return Check(name, "skipped", "the env factory hides its Simulation")
    never = coverage.never_ran()
    if not never:
        return Check(name, "ok", str(coverage))
    return Check(
        name,
        "warning",
        f"{', '.join(never)} never ran in {len(seeds)} seeds x {steps} steps ({coverage}), so "
        "no check here tested that code: give verify more steps or seeds (steps=, seeds=), or "
        "a config where it happens (config=: the parameter values that make it happen sooner "
        "or at all), or a policy that leads there (policy=)",
    )


def _serial_equivalence(name, env_fn, seeds, steps, threads, executors, policy) -> Check:
    layout = _Layout.of(env_fn)
    if layout.serial_only:
        # What a serial-only model can show: checking changes nothing.
        runs = [("serial with check=True", {"executor": "serial", "num_threads": 1, "check": True})]
        skipped = f"parallel executors skipped ({layout.serial_only})"
    else:
        names = compared_executors(executors, _core.executor_names())
        runs = [
            (f"executor {e!r} with {n} threads", {"executor": e, "num_threads": n})
            for e in names
            for n in threads
        ]
        skipped = ""
    for seed in seeds:
        env = _open(env_fn, executor="serial", num_threads=1)
        reference, actions = _trace(env, seed, steps, layout, policy=policy)
        _close(env)
        for label, options in runs:
            env = _open(env_fn, **options)
            frames, _ = _trace(env, seed, steps, layout, actions=actions)
            _close(env)
            found = _compare(reference, frames, layout)
            if found:
                return Check(name, "failed", f"{label} differs from serial (seed {seed}) {found}")
    detail = f"{len(runs)} runs x {len(seeds)} seeds" + (f"; {skipped}" if skipped else "")
    return Check(name, "ok", detail)


def _reset(name, env_fn, seeds, steps, policy) -> Check:
    """One env reused across the seeds (each run twice) against a fresh env per seed."""
    layout = _Layout.of(env_fn)
    reused = _open(env_fn, executor="serial", num_threads=1)
    try:
        order = [s for seed in seeds for s in (seed, seed)]
        for i, seed in enumerate(order):
            frames, actions = _trace(reused, seed, steps, layout, policy=policy)
            fresh = _open(env_fn, executor="serial", num_threads=1)
            expected, _ = _trace(fresh, seed, steps, layout, actions=actions)
            _close(fresh)
            found = _compare(expected, frames, layout)
            if found:
                previous = f"after an episode with seed {order[i - 1]}" if i else "on first use"
                return Check(
                    name,
                    "failed",
                    f"a reused env (reset(seed={seed}) {previous}) differs from a fresh env "
                    f"(fresh value first) {found}: reset must re-initialise every entity state "
                    "(a C++ ModelBase::reset_states allocates, an override must too; a "
                    "PythonModel's or NumbaModel's reset hook must set every field it relies on)",
                )
    finally:
        _close(reused)
    return Check(name, "ok", f"{len(order)} episodes on one env")


def _models(name, fn_a, fn_b, seeds, steps, policy, what_a="prototype", what_b="port") -> Check:
    layout_a, layout_b = _Layout.of(fn_a), _Layout.of(fn_b)
    a = _open(fn_a, executor="serial", num_threads=1)
    b = _open(fn_b, executor="serial", num_threads=1)
    try:
        found = _spaces_difference(a, b)
        if found:
            return Check(name, "failed", f"before any step: {found}")
        same_layout = layout_a.state == layout_b.state and "bytes" not in layout_a.state.names
        same_public = layout_a.public is not None and layout_a.public == layout_b.public
        for seed in seeds:
            frames_a, actions = _trace(a, seed, steps, layout_a, policy=policy)
            frames_b, _ = _trace(b, seed, steps, layout_b, actions=actions)
            found = _compare(frames_a, frames_b, layout_a, same_layout, same_public)
            if found:
                return Check(
                    name, "failed", f"{what_b} differs from {what_a} (seed {seed}) {found}"
                )
    finally:
        _close(a)
        _close(b)
    what = "outputs, totals"
    if same_layout:
        what += ", entity states, pending events"
        what += " and the digest" if same_public else " (not the digest: snapshot records differ)"
    else:
        what += f" only (state layouts differ: {layout_a.state} vs {layout_b.state})"
    return Check(name, "ok", f"{len(list(seeds))} seeds: {what}")


def _declarations(proto_fn, port_fn) -> Check:
    a, b = proto_fn(), port_fn()
    decl_a, decl_b = _declaration(a), _declaration(b)
    _close(a)
    _close(b)
    if decl_a is None or decl_b is None:
        hidden = "prototype" if decl_a is None else "port"
        return Check("declarations", "skipped", f"the {hidden}'s env factory hides its model")
    found = declaration_difference(decl_a, decl_b)
    if found:
        return Check("declarations", "failed", f"prototype vs port: {found}")
    return Check("declarations", "ok", "parameters, keys, state record")


def _modes_fns(model: Model, config: Mapping[str, Any] | None):
    """``(interpreted, compiled)`` env factories of a compiled ``NumbaModel`` class, or None."""
    if not is_numba_model(model) or not numba_available():
        return None
    config = dict(config or {})
    if config.get("compiled", True) is not True:
        return None
    return _env_fn(model, {**config, "compiled": False}), _env_fn(model, config)


def _guarded(name: str, run: Callable[[], Check]) -> Check:
    """Run one check; an error raised mid-run fails it, with the error's message."""
    import seer_env  # noqa: PLC0415 (the package imports the testing kit lazily)

    try:
        with warnings.catch_warnings():
            # More threads than cores is the point here: interleavings, not speed.
            warnings.simplefilter("ignore", seer_env.OversubscriptionWarning)
            return run()
    except (seer_env.ContractViolation, seer_env.HandlerError, seer_env.EventBudgetExceeded) as e:
        return Check(name, "failed", f"{type(e).__name__}: {e}")
    except AssertionError as e:  # an env factory that does not run what it was asked
        return Check(name, "failed", str(e))
    except Exception as e:  # noqa: BLE001 (a report names every check; one error must not end it)
        return Check(name, "failed", f"{type(e).__name__}: {e}")


def verify(
    port: Model,
    prototype: Model | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    seeds: Iterable[int] = (0, 1, 2),
    steps: int = 30,
    threads: Sequence[int] = (1, 2, 4),
    executors: Sequence[str] | None = None,
    policy: Policy | None = None,
    strict: bool = True,
) -> VerifyReport:
    """Run every check a model, or a port of a prototype, needs; locate any difference.

    Args:
        port: the model to check: a registered name, a ``PythonModel`` or
            ``NumbaModel`` subclass, or an env factory ``env_fn(**kw)`` taking
            ``executor``, ``num_threads`` and ``check`` (each env must report
            what it was asked to run in ``env.runtime``).
        prototype: what ``port`` must reproduce (same kinds as ``port``), or
            None to check ``port`` alone.
        config: the model config (for an env factory: keywords it receives).
        seeds: episode seeds (3 or more catch most reset bugs).
        steps: steps per episode.
        threads: thread counts of the serial-equivalence check (at least one).
        executors: executors compared with serial (default: all); naming only
            ``"serial"`` is refused, as it leaves nothing to compare.
        policy: ``policy(seed, step, env) -> actions`` (default: ``random_policy``).
        strict: raise ``AssertionError`` with the report when a check fails.

    Returns:
        The ``VerifyReport`` (``report.ok``, ``report.checks``; ``print(report)``).

    Raises:
        AssertionError: with ``strict``, the report, when a check failed.
        ValueError: arguments that leave a check nothing to compare
            (``seeds=()``, ``threads=()``, ``steps=0``, ``executors=("serial",)``),
            naming the argument and the value, before anything runs.
    """
    start = time.perf_counter()
    seeds, steps = seed_list(seeds), step_count(steps)
    threads = thread_counts(threads)
    compared_executors(executors, _core.executor_names())  # refused before any check runs
    port_fn = _env_fn(port, config)
    proto_fn = _env_fn(prototype, config) if prototype is not None else None
    report = VerifyReport()
    if proto_fn is not None:
        report.checks.append(_guarded("declarations", lambda: _declarations(proto_fn, port_fn)))
        report.checks.append(
            _guarded(
                "contract (prototype)",
                lambda: _contract("contract (prototype)", proto_fn, seeds, steps, policy),
            )
        )
    port_modes = _modes_fns(port, config)
    coverage: list[Coverage | None] = []
    report.checks.append(
        _guarded(
            "contract (port)",
            lambda: _contract(
                "contract (port)",
                port_fn,
                seeds,
                steps,
                policy,
                port_modes and port_modes[0],
                coverage,
            ),
        )
    )
    if coverage:  # the contract check ran to its end
        name_coverage = "coverage (port)"
        report.checks.append(
            _guarded(name_coverage, lambda: _coverage(name_coverage, coverage[0], seeds, steps))
        )
    name = "serial equivalence"
    report.checks.append(
        _guarded(
            name,
            lambda: _serial_equivalence(name, port_fn, seeds, steps, threads, executors, policy),
        )
    )
    name_reset = "reset (reused env)"
    report.checks.append(
        _guarded(name_reset, lambda: _reset(name_reset, port_fn, seeds, steps, policy))
    )
    for which, model in (("port", port), ("prototype", prototype)):
        modes = _modes_fns(model, config) if model is not None else None
        if modes is not None:
            name_modes = f"interpreted vs compiled ({which})"
            report.checks.append(
                _guarded(
                    name_modes,
                    lambda m=modes, n=name_modes: _models(
                        n, m[0], m[1], seeds, steps, policy, "interpreted", "compiled"
                    ),
                )
            )
    if proto_fn is not None:
        name_models = "prototype vs port"
        report.checks.append(
            _guarded(
                name_models,
                lambda: _models(name_models, proto_fn, port_fn, seeds, steps, policy),
            )
        )
    report.seconds = time.perf_counter() - start
    if strict and not report.ok:
        raise AssertionError(str(report))
    return report
