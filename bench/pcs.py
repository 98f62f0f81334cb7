"""PCS groups: environment-execution latency of pcs_v0 (the paper's PDES comparison).

Cases: every executor on ``pcs_v0.step_arrays`` with a fixed batch of guard
actions, STPA's choice, and the pure-Python ``PcsReference`` directly and
vectorized (``alternatives``). All start from seed 0 and take the same actions,
so every case handles the same events.
"""

from __future__ import annotations

import functools

import numpy as np

from bench.adapters import NEVER, PcsJoint
from bench.alternatives import alternative_cases
from bench.env_cases import step_case, timed_env
from bench.executors import executor_cases
from bench.groups import LOAD_COUNTS, Group, Ratio, Target, reduction, under_load
from bench.timing import Case
from seer_env.envs import pcs_v0
from seer_env.testing.reference.pcs import PcsReference

COPIES = 4  # vectorized alternatives: 4 envs of a quarter of the cells each

# The targets on 2 cores, checked on the 64x64, move_interval=450 group. The
# comparison with barrier is EVERY_GROUP's "parallel-2 >= 0.97x barrier-2 in
# every group" (judged over the full profile), and C++ serial against the Python
# reference is a reported ratio (RATIOS), not a target.
TARGETS = (
    Target("parallel-2", "serial", reduction(40), "parallel(2) >= 40% lower than serial"),
    Target("parallel-2", "locked-2", reduction(20), "parallel(2) >= 20% lower than locked"),
)
RATIOS = (Ratio("serial", "reference", "C++ serial vs the Python reference"),)


def guard_actions(cells: int) -> np.ndarray:
    """A fixed batch of guard-channel actions (0-2 guards per cell)."""
    return np.random.default_rng(0).integers(0, 3, cells, dtype=np.int64)


def env_case(config: dict, actions: np.ndarray, executor: str, threads: int) -> Case:
    """pcs_v0 on one executor, through the array fast path."""
    env = timed_env(pcs_v0.parallel_env, config, executor, threads)

    def step() -> None:
        env.step_arrays(actions)

    return step_case(env, step)


def build(
    config: dict, engines: bool, alternatives: bool, counts: tuple[int, ...] | None = None
) -> tuple[list[Case], list[str]]:
    """Executor cases (parallel at ``counts`` threads), then (optionally) the alternatives."""
    actions = guard_actions(config["width"] * config["height"])
    model_config = pcs_v0.parallel_env(**config)._model_config  # what STPA keys on
    make = functools.partial(env_case, config, actions)
    cases = executor_cases(make, "pcs", model_config, engines, counts)
    notes: list[str] = []
    if alternatives:
        part = dict(config, width=config["width"] // 2, height=config["height"] // 2)
        more, notes = alternative_cases(
            functools.partial(PcsJoint, **config),
            functools.partial(PcsJoint, **part),
            functools.partial(PcsReference, max_cycles=NEVER, **part),
            COPIES,
            actions=actions,
        )
        cases += more
    return cases, notes


def group(
    size: int,
    move_interval: float = 4500.0,
    *,
    phones_per_cell: int = 16,
    engines: bool = True,
    alternatives: bool = True,
    targets: bool = False,
    rounds: int = 5,
    steps: int = 3,
    workload: str = "pcs",
    load: bool = False,
) -> Group:
    """PCS on a ``size x size`` torus (``size`` even: the alternatives use quarter grids).

    ``load``: the contention twin (serial, parallel-2, auto beside busy processes).
    """
    config = {
        "width": size,
        "height": size,
        "move_interval": move_interval,
        "phones_per_cell": phones_per_cell,
    }
    phones = "" if phones_per_cell == 16 else f", {phones_per_cell} phones/cell"
    prefix = "STPA: " if workload == "stpa" else ""
    counts = LOAD_COUNTS if load else None
    g = Group(
        workload,
        f"{prefix}PCS {size}x{size}, moves every {move_interval:g} min{phones}",
        config,
        functools.partial(build, config, engines and not load, alternatives and not load, counts),
        steps_per_turn=steps,
        rounds=rounds,
        targets=TARGETS if targets else (),
        ratios=RATIOS if targets else (),
    )
    return under_load(g) if load else g
