"""The RLlib env exposes the global state for a centralised critic: ``state()`` and ENV_STATE."""

import pytest
from envcases import SMALL, make

pytest.importorskip("ray.rllib")
from gymnasium import spaces  # noqa: E402
from ray.rllib.env.multi_agent_env import ENV_STATE  # noqa: E402

from seer_env.integrations import rllib as seer_rllib  # noqa: E402


@pytest.mark.parametrize("name", ["pcs_v1", "aircraft_v1"])
def test_state_and_state_space_are_the_envs(name):
    env = make(name, seed=0)
    wrapped = seer_rllib.SeerRLlibEnv(env)
    wrapped.reset(seed=1)
    assert wrapped.state_space is env.state_space
    assert wrapped.state().tobytes() == env.state().tobytes()
    assert wrapped.state_space.contains(wrapped.state())


@pytest.mark.parametrize("name", ["pcs_v1", "aircraft_v1"])
def test_global_state_puts_the_state_beside_every_observation(name):
    env = make(name, seed=0, max_cycles=5)
    wrapped = seer_rllib.SeerRLlibEnv(env, global_state=True)
    assert ENV_STATE == "state"
    for agent in env.possible_agents:
        space = wrapped.get_observation_space(agent)
        assert isinstance(space, spaces.Dict) and set(space) == {"obs", ENV_STATE}
        assert space["obs"] is env.observation_space(agent)
        assert space[ENV_STATE] is env.state_space
    obs, _ = wrapped.reset(seed=2)
    while True:
        state = env.state()
        for agent, o in obs.items():
            assert wrapped.get_observation_space(agent).contains(o)
            assert o[ENV_STATE].tobytes() == state.tobytes()
        actions = {a: wrapped.get_action_space(a).sample() for a in wrapped.agents}
        obs, _, terminated, truncated, _ = wrapped.step(actions)
        if terminated["__all__"] or truncated["__all__"]:
            break


def test_the_creator_takes_global_state_from_env_config():
    config = {**SMALL["pcs_v1"], "global_state": True, "num_threads": 1}
    env = seer_rllib.env_creator("pcs_v1")(config)
    assert env.global_state
    obs, _ = env.reset(seed=0)
    assert set(next(iter(obs.values()))) == {"obs", ENV_STATE}
    with pytest.raises(ValueError, match="global_state must be a bool, got 'yes'"):
        seer_rllib.SeerRLlibEnv(make("pcs_v1"), global_state="yes")


def test_an_env_without_a_state_space_wraps_but_refuses_global_state():
    from envcases import DyingEnv

    assert seer_rllib.SeerRLlibEnv(DyingEnv(n=3, max_cycles=5)).state_space is None
    with pytest.raises(ValueError, match="global_state=True, but .* has no state_space"):
        seer_rllib.SeerRLlibEnv(DyingEnv(n=3, max_cycles=5), global_state=True)
