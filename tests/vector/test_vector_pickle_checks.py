"""A pickled vector env keeps its pending contract checks (``check_steps``), as a single env does.

A copy shipped to a worker must catch the contract breach its original would
catch in its first steps: the test model ``faulty`` (mode 6: entity 3 writes
entity 4's state, from ``fail_after`` on) breaks the contract in every step.
"""

import pickle

import numpy as np
import pytest

import seer_env
from seer_env.env import SeerParallelEnv
from seer_env.options import option_names
from seer_env.vector import prototype, sync

FOREIGN_WRITE = 6
FAULTY = dict(num_entities=8, num_agents=4, mode=FOREIGN_WRITE, culprit=3, fail_after=0.0)


@pytest.fixture
def faulty_vector(monkeypatch):
    """``SeerVectorEnv("faulty", ...)``: the test model as the vector env's instance."""

    def make_env(name, **config):
        assert name == "faulty"
        options = {k: config.pop(k) for k in option_names() if k in config}
        return SeerParallelEnv("faulty", config, **options)

    monkeypatch.setattr(prototype, "make_env", make_env)

    def build(num_instances=2, **options):
        return sync.SeerVectorEnv("faulty", num_instances, executor="serial", **FAULTY, **options)

    return build


def zeros(env):
    return np.zeros(env.num_envs, np.int64)


@pytest.mark.parametrize("steps_before", [0, 1])
def test_a_pickled_vector_env_still_checks_its_first_steps(faulty_vector, steps_before):
    env = faulty_vector(check_steps=3)
    env.reset(seed=0)
    for _ in range(steps_before):  # checked, and caught: reset, with checks left
        with pytest.raises(seer_env.ContractViolation):
            env.step(zeros(env))
        env.reset(seed=0)
    left = [env.sim.checked_steps_left(i) for i in range(env.num_instances)]
    assert left == [3 - steps_before] * 2
    copy, blob = pickle.loads(pickle.dumps(env)), pickle.dumps(env)
    with pytest.raises(seer_env.ContractViolation, match="wrote the state of entity 4"):
        copy.step(zeros(copy))  # was: stepped the breach silently (no checks left)
    with pytest.raises(seer_env.ContractViolation, match="wrote the state of entity 4"):
        env.step(zeros(env))
    again = pickle.loads(blob)
    assert [again.sim.checked_steps_left(i) for i in range(again.num_instances)] == left


def test_a_copy_checks_no_step_its_original_would_not():
    """Checks only observe: a copy of an env with no checks left gives the same bytes."""
    from seer_env import vector

    env = vector.make("pcs_v0", 2, width=2, height=2, executor="serial", check_steps=1)
    env.reset(seed=4)
    env.step(np.zeros(env.num_envs, np.int64))
    copy = pickle.loads(pickle.dumps(env))
    assert [copy.sim.checked_steps_left(i) for i in range(2)] == [0, 0]
    for k in range(3):
        actions = np.full(env.num_envs, k % 11, np.int64)
        a, b = env.step(actions), copy.step(actions)
        assert all(x.tobytes() == y.tobytes() for x, y in zip(a[:4], b[:4]))


def test_check_steps_off_stays_off_in_a_copy(faulty_vector):
    env = faulty_vector(check_steps=0)
    env.reset(seed=0)
    copy = pickle.loads(pickle.dumps(env))
    copy.step(zeros(copy))  # unchecked: the breach goes unnoticed, as in the original
    env.step(zeros(env))
    assert [copy.sim.digest(i) for i in range(2)] == [env.sim.digest(i) for i in range(2)]
