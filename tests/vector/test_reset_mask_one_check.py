"""One ``options["reset_mask"]`` check for both vector envs; a refused mask resets nothing.

The async env used to turn any value into a bool (2, 0.5, -1, NaN and
strings reset whatever they made truthy); the sync env refused them.
"""

import numpy as np
import pytest

from seer_env import vector

CONFIG = dict(width=2, height=2, executor="serial", check_steps=0)
BAD = [[2, 0, 0, 0], [0.5, 1, 1, 1], [-1, 0, 0, 0], [np.nan, 0, 0, 0], ["a", "b", "c", "d"]]
BAD += [[1, None, 0, 0], [[1, 0], 0, 0, 0]]


def build(kind):
    if kind == "sync":
        return vector.make("pcs_v0", 4, **CONFIG)
    return vector.make_async("pcs_v0", 4, num_batches=2, **CONFIG)


def started(kind):
    env = build(kind)
    env.reset(seed=3)
    env.step(np.zeros(env.num_envs, np.int64))
    return env


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_a_bad_reset_mask_is_refused_alike_and_resets_nothing(kind, bad):
    env, twin = started(kind), started(kind)
    with pytest.raises(ValueError, match=r"options\['reset_mask'\] must hold booleans or 0/1"):
        env.reset(options={"reset_mask": bad})
    actions = np.arange(env.num_envs) % 11
    got, want = env.step(actions), twin.step(actions)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got[:4], want[:4]))


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_shapes_and_split_instances_are_refused_alike(kind):
    env = started(kind)
    rows = np.zeros(env.num_envs, bool)
    rows[0] = True  # one row of instance 0 only
    with pytest.raises(ValueError, match="whole instances"):
        env.reset(options={"reset_mask": rows})
    with pytest.raises(ValueError, match=r"must have shape \(4,\) or \(16,\), got \(3,\)"):
        env.reset(options={"reset_mask": [1, 0, 0]})


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("good", [[1, 0, 0, 1], [True, False, False, True], [1.0, 0, 0, 1.0]])
def test_good_masks_reset_the_same_instances(kind, good):
    env, ref = started(kind), started("sync")
    obs, _ = env.reset(options={"reset_mask": good})
    want, _ = ref.reset(options={"reset_mask": np.array(good, dtype=float) == 1})
    assert obs.tobytes() == want.tobytes()
