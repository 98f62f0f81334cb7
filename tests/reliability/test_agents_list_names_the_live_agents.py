"""``env.agents`` is the user's list: it may be reordered, but must name exactly the live agents.

A live agent removed from it used to be simulated (without an action) but
never reported again; a done agent put back was stepped again. Both are now
a ValueError naming the agent, on the next step, before anything steps.
"""

import numpy as np
import pytest

from seer_env.envs import aircraft_v0, pcs_v1


def started(make):
    env, shadow = make(), make()
    for e in (env, shadow):
        e.reset(seed=2)
    return env, shadow


def pcs():
    return pcs_v1.parallel_env(width=2, height=2, executor="serial", check_steps=0)


def aircraft():
    return aircraft_v0.parallel_env(num_uavs=4, substeps=2, executor="serial", check_steps=0)


def steps(env):
    """Both paths: the dict step and step_arrays, with zero actions for every possible agent."""
    n, shape = len(env.possible_agents), env.action_space(env.possible_agents[0]).shape
    zero = np.zeros(shape, np.float32) if shape else 0
    return {
        "dict": lambda: env.step(dict.fromkeys(env.possible_agents, zero)),
        "arrays": lambda: env.step_arrays(np.zeros((n, *shape), np.asarray(zero).dtype)),
    }


def crash_uav_0(*envs):
    for _ in range(40):
        if "uav_0" not in envs[0].agents:
            return
        for env in envs:
            actions = np.zeros((4, 4), np.float32)
            actions[0] = 1.0  # full climb: out of the arena
            env.step_arrays(actions)
    raise AssertionError("uav_0 did not crash")


@pytest.mark.parametrize("path", ["dict", "arrays"])
@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_live_agent_left_out_of_agents_is_named(path, how):
    env, shadow = started(pcs)
    digest = env.sim.digest()
    if how == "removed":
        env.agents.remove("cell_2")
    else:  # still four names, one of them twice: refused as before (the duplicate)
        env.agents[2] = "cell_1"
    match = r"lacks \['cell_2'\], live" if how == "removed" else "holds 'cell_1' twice"
    with pytest.raises(ValueError, match=rf"env.agents {match}"):
        steps(env)[path]()
    assert env.sim.digest() == digest  # nothing stepped
    env.agents = list(reversed(shadow.agents))  # every live agent, in any order: fine
    steps(env)[path]()
    steps(shadow)[path]()
    assert env.sim.digest() == shadow.sim.digest()


@pytest.mark.parametrize("path", ["dict", "arrays"])
def test_a_done_agent_put_back_into_agents_is_named(path):
    env, shadow = started(aircraft)
    crash_uav_0(env, shadow)
    digest = env.sim.digest()
    env.agents = ["uav_0", *env.agents]
    with pytest.raises(ValueError, match=r"env.agents holds \['uav_0'\], done"):
        steps(env)[path]()
    assert env.sim.digest() == digest
    env.agents = ["uav_3", "uav_1", "uav_2"]  # reordered: fine
    steps(env)[path]()
    steps(shadow)[path]()
    assert env.sim.digest() == shadow.sim.digest()


def test_the_episode_over_the_agents_list_is_checked_from_the_next_reset():
    env, _ = started(pcs)
    env.agents = env.agents[:2]
    env.reset(seed=2)  # a new episode: every agent is live again
    assert env.agents == env.possible_agents
    steps(env)["dict"]()
