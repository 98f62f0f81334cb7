"""``reset(options=...)`` naming a key of the env's configuration is a ValueError naming it.

The configuration is fixed when an env is built: ``options={"width": 8}`` was ignored without a
word. Other keys pass (PettingZoo's API test resets with options of its own); a refused reset
changes nothing.
"""

import numpy as np
import pytest

from seer_env import vector
from seer_env.envs import aircraft_v1, pcs_v1

FIXED = r"options: \['height', 'width'\] belong to the env's configuration, fixed when the env is"


@pytest.mark.parametrize("name", ["pcs_v1", "aircraft_v1"])
def test_a_parallel_env_refuses_configuration_keys_and_changes_nothing(name):
    def make():
        if name == "pcs_v1":
            return pcs_v1.parallel_env(width=2, height=2)
        return aircraft_v1.parallel_env(num_uavs=3)

    env, shadow = make(), make()
    env.reset(seed=1)
    shadow.reset(seed=1)
    keys = {"width": 8, "height": 8} if name == "pcs_v1" else {"num_uavs": 8}
    match = FIXED if name == "pcs_v1" else r"options: \['num_uavs'\] belong to the env's"
    with pytest.raises(ValueError, match=match):
        env.reset(seed=2, options=keys)
    assert env.sim.digest() == shadow.sim.digest()
    with pytest.raises(ValueError, match=r"options: \['max_cycles'\] belong"):
        env.reset(options={"max_cycles": 3})
    env.reset(seed=3, options={})
    env.reset(seed=3, options={"options": 1})  # PettingZoo's api_test passes its own
    env.reset(seed=3, options=None)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_vector_envs_refuse_configuration_keys(kind):
    if kind == "sync":
        env = vector.make("pcs_v0", 2, width=2, height=2)
    else:
        env = vector.make_async("pcs_v0", 2, 2, width=2, height=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"options: \['width'\] belong to the env's"):
        env.reset(options={"width": 8, "reset_mask": [True, False]})
    env.reset(options={"reset_mask": np.array([True, False])})
    env.close()
