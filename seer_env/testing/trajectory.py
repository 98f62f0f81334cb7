"""Record every boundary output of an episode, and find where two records differ."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

# policy(seed, step, env) -> {agent: action} for env.agents
Policy = Callable[[int, int, Any], dict]


def random_policy(seed: int, step: int, env) -> dict:
    """Uniform actions from a generator keyed by ``(seed, step)``: reproducible anywhere.

    An env with action masks (``env.action_masks``) gets valid actions only.
    """
    rng = np.random.default_rng([seed, step])
    actions = {}
    masks = getattr(getattr(env, "unwrapped", env), "action_masks", None)
    rows = getattr(getattr(env, "unwrapped", env), "_agent_index", None)
    for agent in env.agents:
        space = env.action_space(agent)
        if isinstance(space, spaces.Discrete) and masks is not None and rows is not None:
            valid = np.flatnonzero(masks[rows[agent]])
            actions[agent] = int(space.start + valid[rng.integers(len(valid))])
        elif isinstance(space, spaces.Discrete):
            actions[agent] = int(space.start + rng.integers(space.n))
        elif isinstance(space, spaces.Box):
            low = np.where(np.isfinite(space.low), space.low, -1.0)
            high = np.where(np.isfinite(space.high), space.high, 1.0)
            actions[agent] = rng.uniform(low, high).astype(space.dtype)
        else:
            space.seed(int(rng.integers(2**31)))
            actions[agent] = space.sample()
    return actions


def _sim(env):
    return getattr(getattr(env, "unwrapped", env), "sim", None)


def _frame(env, outputs: dict, digest: bool) -> dict:
    frame = dict(outputs)
    frame["agents"] = list(env.agents)
    if getattr(env, "state_space", None) is not None and env.state_space.shape != (0,):
        frame["state"] = env.state()
    sim = _sim(env)
    if digest and sim is not None:
        frame["digest"] = sim.digest()
    return frame


def skip_first_step_checks(env) -> None:
    """Run every recorded step on the env's own executor.

    The first steps' contract checks (``check_steps``) would run them one
    handler at a time, so an executor comparison would not test those steps;
    ``check_contract`` is where the kit checks the contract.
    """
    sim = getattr(getattr(env, "unwrapped", env), "sim", None)
    if hasattr(sim, "check_next_steps"):  # check=True still checks every step
        sim.check_next_steps(0)


def record(
    env,
    seed: int,
    steps: int,
    policy: Policy | None = None,
    actions: list[dict] | None = None,
    digest: bool = True,
) -> tuple[list[tuple[str, dict]], list[dict]]:
    """Run one episode; returns ``(frames, actions)``.

    Each frame is ``(name, outputs)`` for the reset and every step: observations,
    rewards, terminations, truncations, infos (the dicts as returned, so key
    order counts), live agents, ``state()`` and, with ``digest``, the
    runtime's hash of every entity state and pending event. Actions come from
    ``actions`` (a replay) or else ``policy`` (default: ``random_policy``).
    """
    policy = policy or random_policy
    observations, infos = env.reset(seed=seed)
    skip_first_step_checks(env)
    frames = [("reset", _frame(env, {"observations": observations, "infos": infos}, digest))]
    used: list[dict] = []
    for step in range(steps):
        if not env.agents:
            break
        if actions is not None:
            if step >= len(actions):
                break
            act = actions[step]
        else:
            act = policy(seed, step, env)
        used.append(act)
        outputs = step_outputs(env.step(act))
        frames.append((f"step {step + 1}", _frame(env, outputs, digest)))
    return frames, used


STEP_KEYS = ("observations", "rewards", "terminations", "truncations", "infos")


def step_outputs(result: tuple) -> dict[str, Any]:
    """``env.step``'s five dicts, by name."""
    return dict(zip(STEP_KEYS, result))


def _show(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return f"{v!r} ({v.hex()})" if math.isfinite(v) else repr(v)
    if isinstance(value, np.ndarray) and value.size > 8:
        return np.array2string(value, threshold=8, precision=9)
    return repr(value)


def _same_scalar(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):  # bit patterns: -0.0 != 0.0, NaN == same NaN
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return a == b


def _sequence_difference(a: list | tuple, b: list | tuple) -> str:
    """Two sequences of different lengths: the lengths and the first item that differs."""
    if len(a) + len(b) <= 8:
        return f"{_show(a)} != {_show(b)}"
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if i < min(len(a), len(b)):
        where = f"first difference at [{i}]: {_show(a[i])} != {_show(b[i])}"
    else:
        longer, which = (a, "first") if len(a) > len(b) else (b, "second")
        where = f"the first extra item (in the {which}): [{i}] {_show(longer[i])}"
    return f"{len(a)} items != {len(b)} items; {where}"


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where ``a`` and ``b`` differ byte-wise (types, key order, bits), or None."""
    where = path or "value"
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return f"{where}: {type(a).__name__} != {type(b).__name__}"
        if list(a) != list(b):
            if set(a) == set(b):
                return f"{where}: same keys in a different order: {list(a)[:6]} vs {list(b)[:6]}"
            only_a, only_b = sorted(set(a) - set(b))[:5], sorted(set(b) - set(a))[:5]
            return f"{where}: keys differ: only in first {only_a}, only in second {only_b}"
        for key in a:
            found = first_difference(a[key], b[key], f"{path}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return f"{where}: {type(a).__name__} != {type(b).__name__}"
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"{where}: {a.dtype}{list(a.shape)} != {b.dtype}{list(b.shape)}"
        if a.tobytes() == b.tobytes():
            return None
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        i = next(i for i in range(flat_a.size) if flat_a[i].tobytes() != flat_b[i].tobytes())
        index = np.unravel_index(i, a.shape) if a.ndim > 1 else i
        return f"{where}[{index}]: {_show(flat_a[i])} != {_show(flat_b[i])}"
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if type(a) is not type(b):
            return f"{where}: {type(a).__name__} != {type(b).__name__}"
        if len(a) != len(b):
            return f"{where}: {_sequence_difference(a, b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    if not _same_scalar(a, b):
        return f"{where}: {_show(a)} ({type(a).__name__}) != {_show(b)} ({type(b).__name__})"
    return None


def compare_frames(
    reference: list[tuple[str, dict]], other: list[tuple[str, dict]]
) -> tuple[str, str] | None:
    """``(frame name, difference)`` of the first differing frame, or None."""
    for (name, a), (_, b) in zip(reference, other):
        found = first_difference(a, b)
        if found:
            return name, found
    if len(reference) != len(other):
        return "end", f"{len(reference)} frames != {len(other)} frames"
    return None
