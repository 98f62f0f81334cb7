"""reset_mask holds booleans or 0/1: other values are refused before anything resets."""

import numpy as np
import pytest

from seer_env import vector


@pytest.mark.parametrize("bad", [[2, 0], [-1, 1], [0.5, 1.0], ["a", "b"]])
def test_a_mask_of_other_values_is_refused_and_changes_nothing(bad):
    env = vector.make("pcs_v0", 2, width=2, height=2, executor="serial")
    obs, _ = env.reset(seed=3)
    env.step(np.zeros(env.num_envs, np.int64))
    with pytest.raises(ValueError, match=r"reset_mask'\] must hold booleans or 0/1"):
        env.reset(options={"reset_mask": bad})
    twin = vector.make("pcs_v0", 2, width=2, height=2, executor="serial")
    twin.reset(seed=3)
    twin.step(np.zeros(twin.num_envs, np.int64))
    a = env.step(np.zeros(env.num_envs, np.int64))[0]
    b = twin.step(np.zeros(twin.num_envs, np.int64))[0]
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("good", [[1, 0], [True, False], np.array([1.0, 0.0])])
def test_booleans_and_zero_one_select_instances(good):
    env = vector.make("pcs_v0", 2, width=2, height=2, executor="serial")
    env.reset(seed=3)
    env.step(np.zeros(env.num_envs, np.int64))
    untouched = env.sim.digest(1)
    env.reset(options={"reset_mask": good})
    # Instance 0 (selected) starts over; instance 1 keeps its step, byte for byte.
    assert [env.sim.steps(i) for i in range(2)] == [0, 1]
    assert env.sim.digest(1) == untouched
