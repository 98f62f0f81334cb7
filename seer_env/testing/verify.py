"""``verify``: every check a model (or a port of a prototype) needs, in one call.

``verify(port, prototype)`` runs, over several seeds:

1. declarations: the port and the prototype declare the same parameters, keys
   and state record (``assert_declarations_match``);
2. contract: ``check_contract`` on each (checked mode: writes to other
   entities, early cross-entity events, handler errors, outputs outside their
   spaces, non-determinism);
3. serial equivalence: every executor and thread count against serial, on
   outputs AND on every entity state and pending event (a ``PythonModel`` runs
   serially only: for it, checked mode against unchecked mode);
4. reset: one env reused across the seeds against a fresh env per seed
   (state left over from the last episode, a ``reset_states`` that does not
   re-initialise);
5. prototype vs port: outputs, and, when their state layouts agree, every
   entity state and pending event after every step (a reordered floating-point
   expression shows here long before it reaches an output).

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
from seer_env.models.python_model import PythonModel
from seer_env.testing.contract import check_contract
from seer_env.testing.declaration import declaration_difference
from seer_env.testing.equivalence import _spaces_difference
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

Model = str | type[PythonModel] | Callable[..., Any]

_EVENT_FIELDS = ("time", "target", "kind", "source", "seq")


@dataclasses.dataclass
class Check:
    """One check of ``verify``: its name, outcome and what it found."""

    name: str
    status: str  # "ok", "failed" or "skipped"
    detail: str = ""

    def __str__(self) -> str:
        mark = {"ok": "ok     ", "failed": "FAILED ", "skipped": "skipped"}[self.status]
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

    def __str__(self) -> str:
        verdict = "passed" if self.ok else f"{len(self.failures)} check(s) failed"
        lines = [f"verify: {verdict} ({self.seconds:.1f} s)"]
        lines += [str(c) for c in self.checks]
        return "\n".join(lines)


# -- building envs --------------------------------------------------------------------------------
def _env_fn(model: Model, config: Mapping[str, Any] | None) -> Callable[..., Any]:
    """``model`` as an env factory taking ``executor``, ``num_threads``, ``check``."""
    from seer_env.env import SeerParallelEnv  # noqa: PLC0415 (env imports the testing kit's deps)

    if isinstance(model, str) or (isinstance(model, type) and issubclass(model, PythonModel)):
        return lambda **kw: SeerParallelEnv(model, dict(config or {}), **kw)
    if callable(model):
        if config:
            raise ValueError("config must be None when the model is an env factory")
        return model
    raise ValueError(
        f"model must be a registered name, a PythonModel subclass or an env factory, got {model!r}"
    )


def _unwrapped(env):
    return getattr(env, "unwrapped", env)


def _model_of(env) -> str | type[PythonModel] | None:
    return getattr(_unwrapped(env), "_model", None)


def _is_python_model(env) -> bool:
    model = _model_of(env)
    return isinstance(model, type) and issubclass(model, PythonModel)


def _declaration(env) -> dict[str, Any] | None:
    model = _model_of(env)
    if isinstance(model, str):
        return _core.workload_spec(model)
    if isinstance(model, type) and issubclass(model, PythonModel):
        return model.workload_spec()
    return None


def _close(env) -> None:
    close = getattr(env, "close", None)
    if close is not None:
        close()


# -- recording: outputs, entity states and pending events after every step ------------------------
@dataclasses.dataclass
class _Layout:
    """How to read a model's entity states and name its event kinds."""

    state: np.dtype  # the declared state record, or raw bytes
    kinds: list[str]

    @classmethod
    def of(cls, env_fn) -> tuple[_Layout, bool]:
        """The layout of ``env_fn``'s model, and whether it is a ``PythonModel``."""
        env = env_fn(executor="serial", num_threads=1)
        try:
            env.reset(seed=0)  # states are read after a reset, as the runtime does
            sim = _unwrapped(env).sim
            size = sim.entity_states().shape[1]
            declared = (_declaration(env) or {}).get("records", {}).get("state")
            dtype = np.dtype(declared) if declared is not None else None
            if dtype is None or dtype.itemsize != size:
                dtype = np.dtype([("bytes", "u1", (size,))])
            return cls(dtype, list(sim.spec["event_kinds"])), _is_python_model(env)
        finally:
            _close(env)


def _capture(env, outputs: dict, layout: _Layout) -> dict:
    sim = _unwrapped(env).sim
    frame = _frame(env, outputs, digest=True)
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


def _frame_difference(a: dict, b: dict, layout: _Layout, compare_state: bool) -> list[str]:
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
    if compare_state and not found and a.get("digest") != b.get("digest"):
        found.append(
            "digest: states, pending events and outputs are equal; the snapshot, the random "
            "streams' positions, event sequence counters or payloads differ"
        )
    return found


def _compare(reference, other, layout: _Layout, compare_state: bool = True) -> str | None:
    for (name, a), (_, b) in zip(reference, other):
        found = _frame_difference(a, b, layout, compare_state)
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
def _contract(name: str, env_fn, seeds, steps, policy) -> Check:
    report = check_contract(env_fn, seeds=seeds, steps=steps, policy=policy, strict=False)
    if report.ok:
        return Check(name, "ok", f"{report.seeds} seeds, {report.steps} steps")
    lines = []
    for v in report.violations[:3]:
        where = f"seed {v.seed}, " + ("reset" if v.step == 0 else f"step {v.step}")
        lines.append(f"[{v.rule}] {where}: {v.message}")
    return Check(name, "failed", "; ".join(lines))


def _serial_equivalence(name, env_fn, seeds, steps, threads, executors, policy) -> Check:
    layout, python = _Layout.of(env_fn)
    if python:
        # A PythonModel's handlers hold the GIL: it runs on the serial executor
        # only. What it can show: checking changes nothing.
        runs = [("serial with check=True", {"executor": "serial", "num_threads": 1, "check": True})]
        skipped = "parallel executors skipped (a PythonModel runs serially)"
    else:
        names = [e for e in (executors or _core.executor_names()) if e != "serial"]
        runs = [
            (f"executor {e!r} with {n} threads", {"executor": e, "num_threads": n})
            for e in names
            for n in threads
        ]
        skipped = ""
    for seed in seeds:
        env = env_fn(executor="serial", num_threads=1)
        reference, actions = _trace(env, seed, steps, layout, policy=policy)
        _close(env)
        for label, options in runs:
            env = env_fn(**options)
            frames, _ = _trace(env, seed, steps, layout, actions=actions)
            _close(env)
            found = _compare(reference, frames, layout)
            if found:
                return Check(name, "failed", f"{label} differs from serial (seed {seed}) {found}")
    detail = f"{len(runs)} runs x {len(seeds)} seeds" + (f"; {skipped}" if skipped else "")
    return Check(name, "ok", detail)


def _reset(name, env_fn, seeds, steps, policy) -> Check:
    """One env reused across the seeds (each run twice) against a fresh env per seed."""
    layout, _ = _Layout.of(env_fn)
    reused = env_fn(executor="serial", num_threads=1)
    try:
        order = [s for seed in seeds for s in (seed, seed)]
        for i, seed in enumerate(order):
            frames, actions = _trace(reused, seed, steps, layout, policy=policy)
            fresh = env_fn(executor="serial", num_threads=1)
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
                    "(ModelBase::reset_states allocates; an override must too)",
                )
    finally:
        _close(reused)
    return Check(name, "ok", f"{len(order)} episodes on one env")


def _models(name, fn_a, fn_b, seeds, steps, policy) -> Check:
    (layout_a, _), (layout_b, _) = _Layout.of(fn_a), _Layout.of(fn_b)
    a, b = fn_a(executor="serial", num_threads=1), fn_b(executor="serial", num_threads=1)
    try:
        found = _spaces_difference(a, b)
        if found:
            return Check(name, "failed", f"before any step: {found}")
        same_layout = layout_a.state == layout_b.state and "bytes" not in layout_a.state.names
        for seed in seeds:
            frames_a, actions = _trace(a, seed, steps, layout_a, policy=policy)
            frames_b, _ = _trace(b, seed, steps, layout_b, actions=actions)
            found = _compare(frames_a, frames_b, layout_a, compare_state=same_layout)
            if found:
                return Check(name, "failed", f"port differs from prototype (seed {seed}) {found}")
    finally:
        _close(a)
        _close(b)
    what = "outputs, entity states and pending events" if same_layout else "outputs only"
    if not same_layout:
        what += f" (state layouts differ: {layout_a.state} vs {layout_b.state})"
    return Check(name, "ok", f"{len(list(seeds))} seeds: {what}")


def _guarded(name: str, run: Callable[[], Check]) -> Check:
    """Run one check; a runtime error (a contract breach raised mid-run) fails it, located."""
    import seer_env  # noqa: PLC0415 (the package imports the testing kit lazily)

    try:
        with warnings.catch_warnings():
            # More threads than cores is the point here: interleavings, not speed.
            warnings.simplefilter("ignore", seer_env.OversubscriptionWarning)
            return run()
    except (seer_env.ContractViolation, seer_env.HandlerError, seer_env.EventBudgetExceeded) as e:
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
        port: the model to check: a registered name, a ``PythonModel``
            subclass, or an env factory ``env_fn(**kw)`` taking ``executor``,
            ``num_threads`` and ``check``.
        prototype: what ``port`` must reproduce (same kinds as ``port``), or
            None to check ``port`` alone.
        config: the model config when ``port``/``prototype`` are names or classes.
        seeds: episode seeds (3 or more catch most reset bugs).
        steps: steps per episode.
        threads: thread counts of the serial-equivalence check.
        executors: executors compared with serial (default: all).
        policy: ``policy(seed, step, env) -> actions`` (default: ``random_policy``).
        strict: raise ``AssertionError`` with the report when a check fails.

    Returns:
        The ``VerifyReport`` (``report.ok``, ``report.checks``; ``print(report)``).

    Raises:
        AssertionError: with ``strict``, the report, when a check failed.
    """
    start = time.perf_counter()
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed, got []")
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an int >= 1, got {steps!r}")
    port_fn = _env_fn(port, config)
    proto_fn = _env_fn(prototype, config) if prototype is not None else None
    report = VerifyReport()
    if proto_fn is not None:
        a, b = proto_fn(), port_fn()
        decl_a, decl_b = _declaration(a), _declaration(b)
        _close(a)
        _close(b)
        if decl_a is None or decl_b is None:
            report.checks.append(Check("declarations", "skipped", "an env factory hides its model"))
        else:
            found = declaration_difference(decl_a, decl_b)
            status = "failed" if found else "ok"
            detail = f"prototype vs port: {found}" if found else "parameters, keys, state record"
            report.checks.append(Check("declarations", status, detail))
        report.checks.append(_contract("contract (prototype)", proto_fn, seeds, steps, policy))
    report.checks.append(_contract("contract (port)", port_fn, seeds, steps, policy))
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
