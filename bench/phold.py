"""PHOLD groups: the runtime alone (no agents), at chosen compute and communication intensity.

Each entity holds one token; handling it burns ``work`` units (~1 ns each) and
forwards it, to another entity with probability ``remote``. A step is one
``dt`` of simulated time through ``Simulation.run_until``. The pure-Python
``PholdReference`` (no ``work`` parameter) is the alternative where ``work == 0``.
A hot-spot group gives a contiguous block of entities more work per token:
the uneven load that static partitions cannot spread and stealing can.
"""

from __future__ import annotations

import functools

import seer_env
from bench.executors import executor_cases
from bench.groups import LOAD_COUNTS, Group, under_load
from bench.timing import Case, work_counters
from seer_env.testing.reference.phold import PholdReference


def sim_case(config: dict, executor: str, threads: int) -> Case:
    """PHOLD on one executor; a step is ``run_until(now + dt)``."""
    sim = seer_env.Simulation("phold", config, executor=executor, num_threads=threads)
    sim.reset(0)
    dt = config.get("dt", 1.0)

    def step() -> None:
        sim.run_until(sim.now + dt)

    return Case(
        "",
        step,
        events_per_step=lambda: sim.last_step["events"],
        counters_per_step=lambda: work_counters(sim.last_step),
        sim=sim,
    )


def reference_case(config: dict) -> Case:
    """The pure-Python PHOLD, same streams and events as the C++ model."""
    keys = ("num_entities", "population", "remote", "mean", "lookahead", "dt")
    ref = PholdReference(**{k: config[k] for k in keys if k in config})
    ref.reset(0)
    dt = config.get("dt", 1.0)
    last = [0]

    def step() -> None:
        ref.run_until(ref.steps * dt + dt)

    def events() -> float:
        now = ref.events_processed
        delta, last[0] = now - last[0], now
        return delta

    return Case("reference", step, events_per_step=events, meta={"kind": "alternative"})


def build(
    config: dict, engines: bool, reference: bool, counts: tuple[int, ...] | None = None
) -> tuple[list[Case], list[str]]:
    """Executor cases (parallel at ``counts`` threads), plus the Python reference if it fits."""
    cases = executor_cases(functools.partial(sim_case, config), "phold", config, engines, counts)
    notes = []
    if reference and config.get("work", 0) == 0:
        cases.append(reference_case(config))
    elif reference:
        notes.append("no Python reference: PholdReference has no `work` parameter")
    if config.get("hot_work", 0):
        notes.append(
            f"hot spot: entities 0 .. {config['hot_fraction']:g} n burn {config['hot_work']} "
            "more units per token; barrier's static partitions put them all on one thread"
        )
    return cases, notes


def group(
    entities: int,
    work: int = 0,
    *,
    remote: float = 0.25,
    lookahead: float | None = None,
    label: str | None = None,
    hot_fraction: float = 0.0,
    hot_work: int = 0,
    engines: bool = True,
    reference: bool = True,
    rounds: int = 5,
    steps: int = 3,
    workload: str = "phold",
    load: bool = False,
) -> Group:
    """PHOLD with ``entities`` one-token entities, ``remote`` of events cross-entity.

    ``load``: the contention twin (serial, parallel-2, auto beside busy processes).
    """
    config = dict(num_entities=entities, population=1, remote=remote, work=work, dt=1.0)
    if lookahead is not None:
        config["lookahead"] = lookahead
    if hot_work:
        config.update(hot_fraction=hot_fraction, hot_work=hot_work)
    counts = LOAD_COUNTS if load else None
    g = Group(
        workload,
        label or f"PHOLD {entities}, work {work}, remote {remote:g}",
        config,
        functools.partial(build, config, engines and not load, reference and not load, counts),
        steps_per_turn=steps,
        rounds=rounds,
    )
    return under_load(g) if load else g
