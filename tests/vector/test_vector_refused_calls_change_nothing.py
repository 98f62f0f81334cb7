"""A refused call on a vector env changes nothing, in every batch; its error names the row.

Each case makes the same valid calls on the env and on a shadow that never sees
the bad call, then compares what both return, byte for byte.
"""

import numpy as np
import pytest
from vector_cases import SMALL, make, same, zeros


def pair(kind="async"):
    env, shadow = make(kind, **SMALL), make(kind, **SMALL)
    assert same(env.reset(seed=4), shadow.reset(seed=4))
    return env, shadow


def assert_same_from_now_on(env, shadow, steps=3):
    rng = np.random.default_rng(1)
    for _ in range(steps):
        actions = rng.integers(0, 11, size=env.num_envs)
        assert same(env.step(actions), shadow.step(actions))


def half(env, batch):
    return zeros(env)[env.rows(batch)]


def test_reset_with_a_batch_in_flight_resets_no_batch():
    env, shadow = pair()
    env.step_async(half(env, 1), batch=1)
    shadow.step_async(half(shadow, 1), batch=1)
    with pytest.raises(RuntimeError, match="in flight"):
        env.reset(seed=7)
    assert same(env.step_wait(batch=1), shadow.step_wait(batch=1))
    assert_same_from_now_on(env, shadow)


@pytest.mark.parametrize(
    "seed,options",
    [
        ([0, 1, 2, -1], None),  # the last batch's seed is bad
        ([0, 1, 2, 2**64], None),
        (None, {"reset_mask": np.array([1, 1, 1, 1] * 3 + [1, 0, 1, 0], bool)}),  # half an instance
        (None, {"reset_mask": np.ones(5, bool)}),
    ],
)
def test_a_bad_reset_resets_no_batch(seed, options):
    env, shadow = pair()
    env.step(zeros(env)), shadow.step(zeros(shadow))
    with pytest.raises(ValueError, match="seed|reset_mask"):
        env.reset(seed=seed, options=options)
    assert_same_from_now_on(env, shadow)


@pytest.mark.parametrize("call", ["step", "step_async"])
def test_a_bad_action_in_the_last_batch_steps_no_batch_and_names_the_global_row(call):
    env, shadow = pair()
    actions = zeros(env)
    actions[15] = 99  # row 7 of batch 1
    with pytest.raises(ValueError, match=r"actions\[15\] is outside the action space"):
        getattr(env, call)(actions)
    assert not any(b.sim.in_flight for b in env.batches)
    assert_same_from_now_on(env, shadow)


def test_step_wait_of_every_batch_with_one_in_flight_loses_nothing():
    env, shadow = pair()
    env.step_async(half(env, 0), batch=0)
    shadow.step_async(half(shadow, 0), batch=0)
    with pytest.raises(RuntimeError, match="batch 1"):
        env.step_wait()
    assert same(env.step_wait(batch=0), shadow.step_wait(batch=0))  # still in flight, intact
    assert_same_from_now_on(env, shadow)


def test_step_of_every_batch_with_one_in_flight_starts_none():
    env, shadow = pair()
    env.step_async(half(env, 1), batch=1)
    shadow.step_async(half(shadow, 1), batch=1)
    for call in (env.step_async, env.step):
        with pytest.raises(RuntimeError, match="in flight"):
            call(zeros(env))
    assert not env.batches[0].sim.in_flight
    assert same(env.step_wait(batch=1), shadow.step_wait(batch=1))
    assert_same_from_now_on(env, shadow)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_calls_before_reset_are_refused_everywhere(kind):
    env = make(kind, **SMALL)
    for call in (env.step, env.step_async):
        with pytest.raises(RuntimeError, match="before reset"):
            call(zeros(env))
    with pytest.raises(RuntimeError, match="without a step_async"):
        env.step_wait()
    env.reset(seed=0)
    env.step(zeros(env))
