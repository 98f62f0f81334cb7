"""Aircraft groups: inference latency (batched MLP policy + ``env.step``), split in two.

The figure the paper reports for Aircraft is one full decision step: the
policy's forward pass on every UAV's observation, then the env step. Every
case runs that loop with the same untrained, deterministic MLP
(``bench.policy.MlpPolicy``, NumPy, gentle ``action_scale`` so the swarm
keeps flying), so every case flies the same trajectory; the rows report the
policy and env parts as well as their sum.
"""

from __future__ import annotations

import functools

from bench.adapters import AircraftJoint, AircraftReferenceEnv
from bench.alternatives import alternative_cases, driven
from bench.env_cases import step_case, timed_env
from bench.executors import executor_cases
from bench.groups import LOAD_COUNTS, Group, Target, reduction, under_load
from bench.policy import MlpPolicy
from bench.timing import Case
from seer_env.envs import aircraft_v0

COPIES = 4  # vectorized alternatives: 4 swarms of a quarter of the UAVs (same density)
HIDDEN = (64, 64)
ACTION_SCALE = 0.1

TARGETS = (
    Target("parallel-2", "serial", reduction(30), "inference latency >= 30% lower than serial"),
)


def env_case(config: dict, policy: MlpPolicy, executor: str, threads: int) -> Case:
    """aircraft_v0 on one executor, driven by ``policy`` through the array fast path."""
    env = timed_env(aircraft_v0.parallel_env, config, executor, threads)
    step = driven(lambda a: env.step_arrays(a)[0], env.sim.observations(), policy=policy)
    return step_case(env, step)


def build(
    config: dict, alternatives: bool, counts: tuple[int, ...] | None = None
) -> tuple[list[Case], list[str]]:
    """Executor cases (parallel at ``counts`` threads; engines only with every count).

    Then (optionally) the user-facing alternatives.
    """
    probe = aircraft_v0.parallel_env(**config)
    policy = MlpPolicy.for_env(probe, hidden=HIDDEN, action_scale=ACTION_SCALE)
    cases = executor_cases(
        functools.partial(env_case, config, policy),
        "aircraft",
        probe._model_config,
        engines=counts is None,
        counts=counts,
    )
    notes: list[str] = []
    if alternatives:
        part = dict(config, num_uavs=config["num_uavs"] // COPIES)
        more, notes = alternative_cases(
            functools.partial(AircraftJoint, **config),
            functools.partial(AircraftJoint, **part),
            functools.partial(AircraftReferenceEnv, **part),
            COPIES,
            policy=policy,
        )
        cases += more
    return cases, notes


def group(
    num_uavs: int,
    *,
    alternatives: bool = True,
    targets: bool = False,
    rounds: int = 5,
    steps: int = 3,
    load: bool = False,
) -> Group:
    """A swarm of ``num_uavs`` (a multiple of 4) at the default density.

    ``load``: the contention twin (serial, parallel-2, auto beside busy processes).
    """
    config = {"num_uavs": num_uavs}
    g = Group(
        "aircraft",
        f"Aircraft {num_uavs} UAVs",
        config,
        functools.partial(build, config, alternatives and not load, LOAD_COUNTS if load else None),
        steps_per_turn=steps,
        rounds=rounds,
        metric="inference step (policy + env.step)",
        targets=TARGETS if targets else (),
    )
    return under_load(g) if load else g
