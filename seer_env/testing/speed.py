"""How fast a port runs beside another implementation of its model: stepped in turn.

Not a test (speed is measured, not asserted): a model author's measurement
of, say, a ``NumbaModel`` port against the C++ port of the same model. The
two envs live in one process and step in turn (one step of ``a``, one of
``b``), so a load that comes and goes on a busy machine slows both alike.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np

from seer_env.env import SeerParallelEnv


@dataclass(frozen=True)
class StepRatio:
    """Step time of ``a`` over ``b`` (serial executor), three ways of reading the pairs."""

    pairs: float  # the median of the per-pair ratios: what holds on a busy machine
    fastest: float  # the ratio of the two fastest steps: each model's cost undisturbed
    rounds: float  # the median over rounds of the ratio of the rounds' median steps
    a_seconds: float  # median step of a
    b_seconds: float  # median step of b

    def __str__(self) -> str:
        return (
            f"{self.pairs:.2f}x median of step pairs, {self.fastest:.2f}x fastest steps, "
            f"{self.rounds:.2f}x median of rounds ({self.a_seconds * 1e3:.3g} vs "
            f"{self.b_seconds * 1e3:.3g} ms a step)"
        )


def serial_step_ratio(
    a, b, config: dict, *, steps: int = 20, rounds: int = 5, action: int = 0
) -> StepRatio:
    """Step time of model ``a`` over model ``b`` on the serial executor, stepped in turn.

    ``a`` and ``b``: what ``SeerParallelEnv`` takes (a model class or a
    registered name), built with the same ``config``; every agent takes the
    discrete ``action`` every step. One warm-up step each, then ``rounds`` x
    ``steps`` pairs of steps.
    """
    if steps < 1 or rounds < 1:
        raise ValueError(f"steps and rounds must be >= 1, got {steps} and {rounds}")
    options = {"executor": "serial", "num_threads": 1, "max_cycles": 10**9}
    envs = [SeerParallelEnv(model, config, **options) for model in (a, b)]
    try:
        actions = np.full(len(envs[0].possible_agents), action, np.int64)
        for env in envs:
            env.reset(seed=0)
            env.step(dict(zip(env.agents, actions)))
        times: list[list[float]] = [[], []]
        for _ in range(rounds * steps):
            for i, env in enumerate(envs):
                started = time.perf_counter()
                env.sim.step(actions)
                times[i].append(time.perf_counter() - started)
    finally:
        for env in envs:
            env.close()
    by_round = [
        statistics.median(times[0][r : r + steps]) / statistics.median(times[1][r : r + steps])
        for r in range(0, rounds * steps, steps)
    ]
    return StepRatio(
        pairs=statistics.median(a_ / b_ for a_, b_ in zip(*times)),
        fastest=min(times[0]) / min(times[1]),
        rounds=statistics.median(by_round),
        a_seconds=statistics.median(times[0]),
        b_seconds=statistics.median(times[1]),
    )
