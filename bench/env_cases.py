"""A built-in env on one executor, made as every timed env case makes it.

``bench.pcs``, ``bench.aircraft`` and ``bench.python_layer`` time env steps;
they build the env here so that each times the same thing: an episode that
never ends, reset once with seed 0, and no contract checks (the timed steps
start at step 1, inside the checked steps otherwise).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.adapters import NEVER
from bench.timing import Case, work_counters


def timed_env(parallel_env: Callable[..., Any], config: dict, executor: str, threads: int):
    """``parallel_env(**config)`` on ``executor`` x ``threads``, reset and ready to time."""
    env = parallel_env(
        **config,
        executor=executor,
        num_threads=threads,
        max_cycles=NEVER,
        seed=0,
        check_steps=0,
    )
    env.reset()
    return env


def step_case(env: Any, step: Callable[[], Any]) -> Case:
    """``step`` of ``env`` as a case, with the events and work counters of each step."""
    return Case(
        "",
        step,
        events_per_step=lambda: env.sim.last_step["events"],
        counters_per_step=lambda: work_counters(env.sim.last_step),
        sim=env.sim,
    )
