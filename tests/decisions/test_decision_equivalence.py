"""Decisions answered a window at a time equal the one-at-a-time reference, byte for byte."""

import pytest
from decision_models import Tally, TallyNumba

import seer_env
from seer_env.testing import assert_decisions_equivalent


def pcs_admission(**options):
    return seer_env.SeerDecisionEnv(
        "pcs_admission", {"width": 8, "height": 6}, max_cycles=5, **options
    )


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_pcs_admission_windows_equal_one_at_a_time_on_every_executor(seed):
    assert_decisions_equivalent(pcs_admission, seeds=(seed,), threads=(1, 2, 3, 4))


def test_checked_steps_change_no_byte_of_the_decisions():
    def checked(**options):
        return pcs_admission(check=True, **options)

    assert_decisions_equivalent(
        checked, seeds=(5,), threads=(1, 2), executors=("serial", "parallel")
    )


def test_a_compiled_numba_model_asking_for_actions_equals_its_reference():
    def env_fn(**options):
        return seer_env.SeerDecisionEnv(TallyNumba, {"n": 7}, max_cycles=6, **options)

    assert_decisions_equivalent(env_fn, seeds=(0, 1, 2), threads=(1, 2, 4))


def test_a_python_model_asking_for_actions_equals_its_reference():
    def env_fn(**options):
        return seer_env.SeerDecisionEnv(Tally, {"n": 5}, max_cycles=6, **options)

    assert_decisions_equivalent(env_fn, seeds=(0, 1, 2))


def test_interpreted_and_compiled_decisions_return_the_same_bytes():
    runs = []
    for compiled in (False, True):
        env = seer_env.SeerDecisionEnv(
            TallyNumba, {"n": 5, "compiled": compiled}, max_cycles=4, decisions="one_at_a_time"
        )
        obs, infos = env.reset(seed=3)
        seen = []
        while env.agents:
            seen.append(tuple((a, obs[a].tobytes()) for a in env.agents))
            obs, *_ = env.step({a: int(a[-1]) % 3 for a in env.agents})
        runs.append((seen, env.sim.digest()))
    assert runs[0] == runs[1]


def test_an_agent_released_before_its_action_fails_the_equivalence():
    """The planted bug: a waiting agent's later events run before its answer."""

    def env_fn(**options):
        env = seer_env.SeerDecisionEnv(TallyNumba, {"n": 6}, max_cycles=4, **options)
        if options["decisions"] == "windows":
            env.sim._plant_early_release_for_testing()
        return env

    with pytest.raises(AssertionError, match="differ from one at a time"):
        assert_decisions_equivalent(env_fn, seeds=(0,), threads=(1,), executors=("serial",))


def test_windows_batch_the_requests_of_one_window():
    env = pcs_admission(executor="serial", num_threads=1)
    env.reset(seed=0)
    sizes, windows = [], set()
    while env.agents:
        sizes.append(len(env.agents))
        windows.add(env.sim.decision_window)
        times = env.decision_times
        begin, end = env.sim.decision_window
        assert ((times >= begin) & (times < end)).all()
        env.step(dict.fromkeys(env.agents, 1))
    reference = pcs_admission(decisions="one_at_a_time")
    reference.reset(seed=0)
    single = 0
    while reference.agents:
        single += 1
        reference.step(dict.fromkeys(reference.agents, 1))
    assert sum(sizes) == single  # the same requests, in fewer batches
    assert max(sizes) > 1 and len(sizes) < single


def test_large_batches_answered_on_the_pool_equal_one_at_a_time():
    """Windows of more than 64 requests answer on the executor's threads."""

    def env_fn(**options):
        return seer_env.SeerDecisionEnv(
            "pcs_admission", {"width": 24, "height": 24}, max_cycles=9, **options
        )

    env = env_fn(executor="parallel", num_threads=2)
    env.reset(seed=1)
    largest = 0
    while env.agents:
        largest = max(largest, len(env.agents))
        env.step(dict.fromkeys(env.agents, 1))
    assert largest > 64  # the pool's path ran
    assert_decisions_equivalent(env_fn, seeds=(1,), threads=(2,), executors=("parallel",))
