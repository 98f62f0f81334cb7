"""reward_terms: the aircraft reward split into its terms, summing to the rewards exactly."""

import numpy as np
import pytest

import seer_env
from seer_env.envs.aircraft import reward_terms

TERMS = ["progress", "near_misses", "energy", "crash"]


@pytest.mark.parametrize("name", ["aircraft_v0", "aircraft_v1"])
@pytest.mark.parametrize("executor, threads", [("serial", 1), ("parallel", 2)])
def test_the_terms_sum_to_the_rewards_bit_for_bit(name, executor, threads):
    seen = dict.fromkeys(TERMS, False)  # each term nonzero at least once
    for seed in (0, 1, 2):
        env = seer_env.make(name, num_uavs=16, seed=seed, executor=executor, num_threads=threads)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while env.agents:
            _, rewards, _, _ = env.step_arrays(rng.uniform(-1, 1, (16, 4)).astype(np.float32))
            terms = reward_terms(env)
            assert list(terms) == TERMS
            total = terms["progress"] + terms["near_misses"] + terms["energy"] + terms["crash"]
            assert total.dtype == rewards.dtype and total.tobytes() == rewards.tobytes()
            for k in TERMS:
                seen[k] |= bool(terms[k].any())
        env.close()
    assert all(seen.values()), seen


def test_the_weights_are_the_envs_own():
    env = seer_env.make(
        "aircraft_v1",
        num_uavs=16,
        seed=0,
        near_miss_penalty=0.0,
        energy_weight=0.0,
        crash_penalty=0.0,
    )
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        _, rewards, _, _ = env.step_arrays(rng.uniform(-1, 1, (16, 4)).astype(np.float32))
        terms = reward_terms(env)
        assert not terms["near_misses"].any() and not terms["energy"].any()
        assert not terms["crash"].any()
        assert terms["progress"].tobytes() == rewards.tobytes()
