"""What a user runs today, as benchmark cases: the reference envs, directly and vectorized.

* ``reference``: the pure-Python / NumPy reference env of the same size, one
  process, stepped directly (``serial`` vs this is what C++ buys; ``parallel``
  vs this, C++ and threads).
* ``async-vec``: Gymnasium ``AsyncVectorEnv`` over ``copies`` reference envs
  of ``1/copies`` the size each (one process per copy), behind
  ``JointArrayEnv``.
* ``supersuit``: SuperSuit ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1
  (env), copies, num_cpus=2)``: the same copies in 2 processes.

"Same total work": the copies together hold as many entities (cells, UAVs)
as the env the executors step, at the same density, so they handle about as
many events per step. Process-level vectorization can only split work across
env copies; it cannot shorten one step of one large env, which is the
comparison this makes visible.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import numpy as np

from bench.adapters import JointArrayEnv
from bench.timing import Case

VEC_CPUS = 2  # SuperSuit's num_cpus, as in its docs' examples and on these machines

EnvStep = Callable[[np.ndarray], np.ndarray]  # flat actions of every agent -> flat obs


def driven(env_step: EnvStep, first_obs: np.ndarray, actions=None, policy=None) -> Callable:
    """A step callable: fixed ``actions``, or ``policy`` on the last observations.

    With a policy the step is an inference step and returns its split
    ``{"policy": s, "env": s}`` (the paper's "inference latency").
    """
    if policy is None:

        def fixed() -> None:
            env_step(actions)

        return fixed
    last = [first_obs]

    def step() -> dict:
        t0 = time.perf_counter()
        acts = policy(last[0])
        t1 = time.perf_counter()
        last[0] = env_step(acts)
        return {"policy": t1 - t0, "env": time.perf_counter() - t1}

    return step


def reference_case(make_joint: Callable, actions=None, policy=None) -> Case:
    """The reference env of the full size, stepped in this process."""
    joint = make_joint()
    obs = joint.reset(0)
    counts = getattr(joint, "events", None)
    last = [counts() if counts else 0]

    def events() -> float:
        now = counts()
        delta, last[0] = now - last[0], now
        return delta

    return Case(
        "reference",
        driven(lambda a: joint.step(a)[0], obs, actions, policy),
        events_per_step=events if counts else None,
        meta={"kind": "alternative", "copies": 1, "processes": 1},
    )


def async_vector_case(make_part: Callable, copies: int, actions=None, policy=None) -> Case:
    """``copies`` part-size reference envs under Gymnasium ``AsyncVectorEnv``."""
    from gymnasium.vector import AsyncVectorEnv

    venv = AsyncVectorEnv([functools.partial(JointArrayEnv, make_part)] * copies)
    obs, _ = venv.reset(seed=0)
    batch = venv.action_space.shape

    def env_step(a: np.ndarray) -> np.ndarray:
        out = venv.step(np.asarray(a).reshape(batch))[0]
        return out.reshape(-1, out.shape[-1])

    return Case(
        "async-vec",
        driven(env_step, obs.reshape(-1, obs.shape[-1]), actions, policy),
        meta={"kind": "alternative", "copies": copies, "processes": copies},
        close=venv.close,
    )


def supersuit_case(make_parallel: Callable, copies: int, actions=None, policy=None) -> Case | str:
    """``copies`` part-size ParallelEnvs under SuperSuit; a note instead if it is missing."""
    try:
        import supersuit as ss
    except ImportError:
        return "supersuit not installed (pip install supersuit): its case is skipped"
    env = make_parallel()
    if env.metadata.get("name", "").startswith("aircraft"):
        env = ss.black_death_v3(env)  # UAVs can crash; SuperSuit needs a fixed agent set
    venv = ss.concat_vec_envs_v1(
        ss.pettingzoo_env_to_vec_env_v1(env), copies, num_cpus=VEC_CPUS, base_class="gymnasium"
    )
    obs, _ = venv.reset(seed=0)
    return Case(
        "supersuit",
        driven(lambda a: venv.step(a)[0], obs, actions, policy),
        meta={"kind": "alternative", "copies": copies, "processes": min(VEC_CPUS, copies)},
        close=venv.close,
    )


def alternative_cases(
    make_joint: Callable,
    make_part_joint: Callable,
    make_part_parallel: Callable,
    copies: int,
    actions=None,
    policy=None,
) -> tuple[list[Case], list[str]]:
    """The three user-facing alternatives (and notes on any that could not run)."""
    cases = [
        reference_case(make_joint, actions, policy),
        async_vector_case(make_part_joint, copies, actions, policy),
    ]
    notes = []
    ss_case = supersuit_case(make_part_parallel, copies, actions, policy)
    if isinstance(ss_case, str):
        notes.append(ss_case)
    else:
        cases.append(ss_case)
    return cases, notes
