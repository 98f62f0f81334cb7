"""Snapshot and fork groups: what a copy of a running env costs, and stepping K copies at once.

``snapshot_group``: one env mid-episode (pcs_v0 or aircraft_v0, the parallel executor on 2
threads, as ``num_threads="auto"`` picks for these sizes), and the ways to copy it timed in
turns: ``env.snapshot()`` and ``env.restore(snapshot)`` against ``pickle.dumps`` /
``pickle.loads`` and ``copy.deepcopy`` (what users did before). A case's "step" is one copy;
its row carries the bytes each produces and the GB/s that makes.

``fork_group``: K branches of PCS 64x64 from one snapshot, stepped together in one call
(``env.fork(K)``) against K separate envs restored from it and stepped one after another; a
"step" is one step of all K.
"""

from __future__ import annotations

import copy
import functools
import pickle

import numpy as np

from bench.adapters import NEVER
from bench.groups import Group, Ratio
from bench.timing import Case
from seer_env.envs import aircraft_v0, pcs_v0

WARM_STEPS = 3  # steps before the copies: events pending, outputs written


# Every timed env: the parallel executor on 2 threads (what num_threads="auto"
# picks at these sizes), unchecked, and an episode that does not end.
RUNTIME = dict(executor="parallel", num_threads=2, max_cycles=NEVER, check_steps=0, seed=0)


def _new_env(workload: str, size: int):
    if workload == "pcs":
        return pcs_v0.parallel_env(width=size, height=size, **RUNTIME)
    return aircraft_v0.parallel_env(num_uavs=size, **RUNTIME)


def _running_env(workload: str, size: int):
    """An env mid-episode, its pool warm (parallel, 2 threads)."""
    env = _new_env(workload, size)
    env.reset()
    space = env.action_space(env.possible_agents[0])
    rng = np.random.default_rng(0)
    if hasattr(space, "n"):
        actions = rng.integers(0, 3, len(env.possible_agents), dtype=np.int64)
    else:
        actions = rng.uniform(-0.2, 0.2, (len(env.possible_agents), *space.shape))
        actions = actions.astype(np.float32)
    for _ in range(WARM_STEPS):
        env.step_arrays(actions)
    return env


def _copy_case(name: str, op, nbytes: int) -> Case:
    def step() -> None:  # the copy is dropped: a Case's step returns only its time's parts
        op()

    return Case(name, step, meta={"bytes": nbytes})


def build_snapshots(workload: str, size: int) -> tuple[list[Case], list[str]]:
    """The five ways to copy one running env, each its own case."""
    env = _running_env(workload, size)
    snap = env.snapshot()
    pickled = pickle.dumps(env)
    target = _running_env(workload, size)  # restored into, over and over
    cases = [
        _copy_case("snapshot", env.snapshot, len(snap.runtime)),
        _copy_case("restore", functools.partial(target.restore, snap), len(snap.runtime)),
        _copy_case("pickle.dumps", functools.partial(pickle.dumps, env), len(pickled)),
        _copy_case("pickle.loads", functools.partial(pickle.loads, pickled), len(pickled)),
        _copy_case("deepcopy", functools.partial(copy.deepcopy, env), len(pickled)),
    ]
    pending = env.sim.pending_count
    per_event = (
        f" ({len(snap.runtime) / pending:.0f} B per pending event, entity records and outputs "
        "included)"
        if pending
        else " (no event pending at a boundary: entity records and outputs)"
    )
    notes = [
        f"{pending} pending events; snapshot {len(snap.runtime) / 1e6:.1f} MB{per_event}, "
        f"pickle {len(pickled) / 1e6:.1f} MB"
    ]
    return cases, notes


def snapshot_group(workload: str, size: int, *, rounds: int = 3, steps: int = 3) -> Group:
    """Copies of pcs_v0 ``size x size`` or aircraft_v0 with ``size`` UAVs."""
    what = f"PCS {size}x{size}" if workload == "pcs" else f"Aircraft {size} UAVs"
    return Group(
        "branching",
        f"Snapshots: {what}",
        {"workload": workload, "size": size},
        functools.partial(build_snapshots, workload, size),
        steps_per_turn=steps,
        rounds=rounds,
        warmup_steps=1,
        metric="copy",
        ratios=(
            Ratio("snapshot", "pickle.dumps", "snapshot vs pickle.dumps"),
            Ratio("restore", "pickle.loads", "restore vs pickle.loads"),
            Ratio("snapshot", "deepcopy", "snapshot vs deepcopy"),
        ),
        derive=_throughput_lines,
    )


def _throughput_lines(rows: list[dict]) -> list[str]:
    """GB/s of each copy (its bytes over its median time)."""
    out = []
    for row in rows:
        if row.get("bytes") and row["median_ms"] > 0:
            out.append(f"{row['name']}: {row['bytes'] / row['median_ms'] / 1e6:.2f} GB/s")
    return ["; ".join(out)] if out else []


def build_forks(size: int, branches: int) -> tuple[list[Case], list[str]]:
    """K branches stepped in one call (a fork) vs K restored envs stepped in turn."""
    source = _running_env("pcs", size)
    snap = source.snapshot()
    n = len(source.possible_agents)
    actions = np.random.default_rng(1).integers(0, 3, n * branches, dtype=np.int64)
    forks = source.fork(branches)
    separate = []
    for _ in range(branches):
        env = _new_env("pcs", size)
        env.restore(snap)
        separate.append(env)

    def step_forks() -> None:
        forks.step(actions)

    def step_separate() -> None:
        for k, env in enumerate(separate):
            env.step_arrays(actions[k * n : (k + 1) * n])

    cases = [
        Case(f"fork x{branches} (one call)", step_forks, wake=True),
        Case(f"{branches} separate envs", step_separate, wake=True),
    ]
    return cases, [f"{branches} branches of PCS {size}x{size}, parallel executor, 2 threads"]


def fork_group(branches: int, size: int = 64, *, rounds: int = 5, steps: int = 3) -> Group:
    """``branches`` copies of PCS ``size x size``: a fork against separate envs."""
    fork, separate = f"fork x{branches} (one call)", f"{branches} separate envs"
    return Group(
        "branching",
        f"Forks: {branches} branches of PCS {size}x{size}",
        {"size": size, "branches": branches},
        functools.partial(build_forks, size, branches),
        steps_per_turn=steps,
        rounds=rounds,
        metric=f"one step of {branches} branches",
        ratios=(Ratio(fork, separate, "fork vs separate envs"),),
    )


def groups(quick: bool) -> list[Group]:
    """The branching groups of a profile (``quick``: the default profile's)."""
    if quick:
        return [snapshot_group("pcs", 128), fork_group(16, 8), fork_group(4)]
    return [
        snapshot_group("pcs", 32, steps=5),
        snapshot_group("pcs", 128),
        snapshot_group("pcs", 256, rounds=3, steps=1),
        snapshot_group("aircraft", 1024),
        snapshot_group("aircraft", 4096, rounds=3, steps=1),
        # Small instances, which alone cannot fill the pool, then ones that can.
        fork_group(16, 8),
        fork_group(16, 16),
        *(fork_group(k) for k in (1, 2, 4, 8, 16)),
    ]
