"""``state()`` holds what the reward depends on (a centralised critic's input).

pcs_v1's traffic, so its reward, follows the time of day; aircraft's progress
reward follows the goals. The _v1 tasks carry them in ``state()``; the _v0
benchmark workloads keep the state they were released with.
"""

import numpy as np
import pytest

from seer_env.envs import aircraft_v0, aircraft_v1, pcs_v0, pcs_v1


def _run(env, steps, seed=0):
    """Reset, then ``steps`` steps of seeded random actions; the last observations."""
    observations, _ = env.reset(seed=seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    for _ in range(steps):
        actions = {a: env.action_space(a).sample() for a in env.agents}
        observations, *_ = env.step(actions)
    return observations


@pytest.mark.parametrize("steps", [0, 1, 7])
def test_pcs_v1_state_ends_with_the_time_of_day(steps):
    env = pcs_v1.parallel_env(width=3, height=2, max_cycles=20)
    observations = _run(env, steps)
    state = env.state()
    assert env.state_space.shape == state.shape == (2 * 6 + 2,)
    assert env.state_space.contains(state)
    assert (env.state_space.low == -1.0).all() and (env.state_space.high == 1.0).all()
    for obs in observations.values():  # every cell observes the same time of day
        assert state[-2:].tobytes() == obs[10:12].tobytes()
    hour = 24.0 * steps * 60.0 / 1440.0
    angle = 2 * np.pi * hour / 24.0
    assert state[-2:] == pytest.approx([np.sin(angle), np.cos(angle)], abs=1e-6)
    cells = state[:-2]
    assert ((cells >= 0) & (cells <= 1)).all()


def test_pcs_v0_state_is_unchanged():
    env = pcs_v0.parallel_env(width=3, height=2)
    env.reset(seed=0)
    assert env.state().shape == env.state_space.shape == (2 * 6,)
    assert (env.state_space.low == 0.0).all()


def test_aircraft_v1_state_holds_each_goal_as_the_observation_does():
    env = aircraft_v1.parallel_env(num_uavs=5, max_cycles=20)
    observations = _run(env, 3)
    state = env.state()
    assert env.state_space.shape == state.shape == (11 * 5,)
    assert env.state_space.contains(state)
    per_uav = state.reshape(5, 11)
    for i, agent in enumerate(env.possible_agents):
        if agent in observations:
            assert per_uav[i, 8:11].tobytes() == observations[agent][13:16].tobytes()
            assert per_uav[i, 0:3].tobytes() == observations[agent][0:3].tobytes()
    assert np.abs(per_uav[:, 8:11]).max() > 0  # the goals are not where the UAVs are


def test_aircraft_v0_state_is_unchanged():
    env = aircraft_v0.parallel_env(num_uavs=5)
    env.reset(seed=0)
    assert env.state().shape == env.state_space.shape == (8 * 5,)
