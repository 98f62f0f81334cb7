"""Byte-for-byte equivalence assertions: executors against serial, model against model."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence

from seer_env import _core
from seer_env.model_source import is_numba_model, runs_on_threads
from seer_env.models.python_model import PythonModel
from seer_env.testing.arguments import compared_executors, seed_list, step_count, thread_counts
from seer_env.testing.trajectory import Policy, compare_frames, first_difference, record

EnvFn = Callable[..., object]


def _close(env) -> None:
    close = getattr(env, "close", None)
    if close is not None:
        close()


def serial_only_reason(env) -> str | None:
    """Why ``env``'s model runs on the serial executor only, or None when it runs on threads."""
    unwrapped = getattr(env, "unwrapped", env)
    model = getattr(unwrapped, "_model", None)
    if isinstance(model, type) and issubclass(model, PythonModel):
        return "a PythonModel runs serially: its handlers hold the GIL"
    config = dict(getattr(unwrapped, "_model_config", None) or {})
    if is_numba_model(model) and not runs_on_threads(model, config):
        return "an interpreted NumbaModel (compiled=False) runs serially: its handlers hold the GIL"
    return None


def require_runtime(env, executor: str, num_threads: int) -> None:
    """AssertionError unless ``env`` ran on ``executor`` with ``num_threads`` threads.

    Without this check an ``env_fn`` that ignores its keywords would compare
    serial with serial and pass without testing anything.
    """
    runtime = getattr(getattr(env, "unwrapped", env), "runtime", None)
    if runtime is None:
        raise AssertionError(
            f"env_fn(executor={executor!r}, num_threads={num_threads}) returned "
            f"{type(env).__name__}, which has no `runtime`: cannot tell which executor ran"
        )
    if (runtime.executor, runtime.num_threads) != (executor, num_threads):
        raise AssertionError(
            f"env_fn(executor={executor!r}, num_threads={num_threads}) ran on executor "
            f"{runtime.executor!r} with {runtime.num_threads} threads (env.runtime): env_fn "
            "must pass both keywords to the env, or the comparison tests nothing"
        )


def assert_serial_equivalent(
    env_fn: EnvFn,
    *,
    seeds: Iterable[int] = (0, 1),
    steps: int = 20,
    threads: Sequence[int] = (1, 2, 4),
    executors: Sequence[str] | None = None,
    policy: Policy | None = None,
) -> None:
    """Assert every executor and thread count reproduces the serial executor's bytes.

    For each seed, the serial run (``env_fn(executor="serial", num_threads=1)``)
    is recorded with actions from ``policy``; every other executor (default:
    all of ``seer_env.executor_names()``) at every thread count in
    ``threads`` replays the same actions. Reset outputs, observations, rewards,
    terminations, truncations, infos (dict key order included), live agents,
    ``state()`` and the runtime digest (every entity state and pending event)
    must match bit for bit after every step.

    Each run must report the executor and thread count it was asked for in
    ``env.runtime`` (so an ``env_fn`` that drops its keywords fails instead
    of comparing serial with serial). A model that runs serially only (a
    ``PythonModel``, a ``NumbaModel`` with ``compiled=False``) skips the
    other executors with a ``UserWarning`` saying so, and is compared with
    itself in checked mode (``check=True``) instead.

    Raises:
        AssertionError: naming the executor, thread count, seed, step, output
            and agent of the first difference, with both values; or naming the
            executor and thread count an env ran on instead of those requested.
        ValueError: arguments that leave nothing to compare (``seeds=()``,
            ``threads=()``, ``steps=0``, ``executors=("serial",)``), naming them.
    """
    seeds, steps = seed_list(seeds), step_count(steps)
    threads = thread_counts(threads)
    names = compared_executors(executors, _core.executor_names())
    runs = [(e, n, {"executor": e, "num_threads": n}) for e in names for n in threads]
    for seed in seeds:
        env = env_fn(executor="serial", num_threads=1)
        reference, actions = record(env, seed, steps, policy=policy)
        require_runtime(env, "serial", 1)
        serial_only = serial_only_reason(env)
        _close(env)
        if serial_only and runs:
            warnings.warn(
                f"assert_serial_equivalent: parallel executors skipped ({serial_only}); "
                "comparing serial with check=True instead. Run a compiled NumbaModel or a C++ "
                "port to compare executors",
                UserWarning,
                stacklevel=2,
            )
            runs = [("serial", 1, {"executor": "serial", "num_threads": 1, "check": True})]
        for executor, num_threads, options in runs:
            env = env_fn(**options)
            frames, _ = record(env, seed, steps, actions=actions)
            require_runtime(env, executor, num_threads)
            _close(env)
            found = compare_frames(reference, frames)
            if found:
                label = (
                    "serial with check=True"
                    if "check" in options
                    else (f"executor {executor!r} with {num_threads} threads")
                )
                raise AssertionError(
                    f"{label} differs from serial (seed {seed}) at {found[0]}: {found[1]}"
                )


def _ends(names: list[str]) -> str:
    return "none" if not names else f"{names[0]!r}..{names[-1]!r}"


def _spaces_difference(a, b) -> str | None:
    agents_a, agents_b = list(a.possible_agents), list(b.possible_agents)
    if len(agents_a) != len(agents_b):
        return (
            f"possible_agents: {len(agents_a)} vs {len(agents_b)} agents (a config that differs? "
            f"{_ends(agents_a)} vs {_ends(agents_b)})"
        )
    if agents_a != agents_b:
        return first_difference(agents_a, agents_b, "possible_agents")
    for agent in a.possible_agents:
        for what in ("observation_space", "action_space"):
            sa, sb = getattr(a, what)(agent), getattr(b, what)(agent)
            if sa != sb:
                return f"{what}({agent!r}): {sa} != {sb}"
    return None


def assert_models_equivalent(
    env_fn_a: EnvFn,
    env_fn_b: EnvFn,
    *,
    seeds: Iterable[int] = (0, 1),
    steps: int = 20,
    policy: Policy | None = None,
) -> None:
    """Assert two implementations of a model return the same bytes.

    ``env_fn_a()`` and ``env_fn_b()`` (no arguments) build the two envs, e.g.
    a ``PythonModel`` prototype and its C++ port. Agents and spaces must be
    equal; then, per seed, both run the same actions and every boundary output
    (as in ``assert_serial_equivalent``, without the runtime digest, since the
    two models' state layouts may differ) must match bit for bit.

    Raises:
        AssertionError: naming the seed, step, output and agent of the first
            difference, with model a's value first.
        ValueError: ``seeds=()`` or ``steps=0`` (nothing to compare), naming it.
    """
    seeds, steps = seed_list(seeds), step_count(steps)
    a, b = env_fn_a(), env_fn_b()
    try:
        found = _spaces_difference(a, b)
        if found:
            raise AssertionError(f"models differ before any step: {found}")
        for seed in seeds:
            frames_a, actions = record(a, seed, steps, policy=policy, digest=False)
            frames_b, _ = record(b, seed, steps, actions=actions, digest=False)
            found = compare_frames(frames_a, frames_b)
            if found:
                raise AssertionError(
                    f"model b differs from model a (seed {seed}) at {found[0]}: {found[1]}"
                )
    finally:
        _close(a)
        _close(b)
