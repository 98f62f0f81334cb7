"""What the ecosystem (PettingZoo, SuperSuit, RLlib, TorchRL) expects of a drop-in ParallelEnv.

One test per trap: a ParallelEnv subclass in Python, settable attributes,
agent lists, names, metadata, spaces returned as the same objects, state,
reset and step signatures, Python types, PettingZoo's own API tests, fresh
arrays, info keys, thread-count and pickling equivalence.

Every test runs on every built-in env (``seer_env.env_names()``), so an env
that lands later is held to the same list.
"""

import importlib
import inspect
import re

import cloudpickle
import numpy as np
import pytest
from envcases import AGENTS_DIE, ENV_NAMES, checker_warnings, cycles, make, sample_actions, trace
from pettingzoo import ParallelEnv
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
)
from pettingzoo.utils.conversions import parallel_to_aec

import seer_env

pytestmark = pytest.mark.parametrize("name", ENV_NAMES)


def test_is_a_parallel_env_subclass_in_python_not_the_binding(name):
    env = make(name)
    assert isinstance(env, ParallelEnv)
    assert type(env).__module__.startswith("seer_env.")
    assert env.unwrapped is env
    assert not isinstance(env, seer_env.Simulation)


def test_attribute_assignment_works(name):
    env = make(name)
    env.max_cycles = 3  # parallel_api_test does this
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step(sample_actions(env, rng))
    assert env.agents == []
    env.some_user_attribute = 1
    assert env.some_user_attribute == 1


def test_possible_agents_fixed_and_agents_a_fresh_list(name):
    env = make(name, max_cycles=cycles(name, 4))
    possible = list(env.possible_agents)
    env.reset(seed=0)
    assert env.agents == env.possible_agents
    assert env.agents is not env.possible_agents
    env.agents.append("intruder")  # mutating agents must not touch possible_agents
    assert env.possible_agents == possible
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    seen = set(env.agents)
    while env.agents:
        before = env.agents
        env.step(sample_actions(env, rng))
        assert env.agents is not before and env.agents is not env.possible_agents
        assert set(env.agents) <= seen  # none come back
        seen = set(env.agents)
    assert env.possible_agents == possible


def test_agent_names_are_prefix_underscore_int(name):
    env = make(name)
    prefixes = {
        re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)_(\d+)", a).group(1) for a in env.possible_agents
    }
    assert len(prefixes) == 1  # TorchRL groups by the prefix: one group
    indices = [int(a.rsplit("_", 1)[1]) for a in env.possible_agents]
    assert indices == list(range(len(indices)))


def test_metadata_and_render_mode(name):
    env = make(name)
    assert env.metadata["name"] == name
    assert env.metadata["is_parallelizable"] is True
    assert isinstance(env.metadata["render_modes"], list)
    assert env.render_mode is None
    for mode in env.metadata["render_modes"]:
        assert make(name, render_mode=mode).render_mode == mode


def test_spaces_are_the_same_object_every_call(name):
    env = make(name)
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        assert env.observation_spaces[agent] is env.observation_space(agent)
        assert env.action_spaces[agent] is env.action_space(agent)
    assert list(env.observation_spaces) == env.possible_agents
    assert list(env.action_spaces) == env.possible_agents
    # SuperSuit needs identical spaces for all agents
    first = env.possible_agents[0]
    assert all(env.observation_space(a) == env.observation_space(first) for a in env.agents)


def test_state_inside_state_space(name):
    env = make(name)
    env.reset(seed=1)
    assert env.state_space.contains(env.state())
    rng = np.random.default_rng(1)
    for _ in range(5):
        env.step(sample_actions(env, rng))
        state = env.state()
        assert state.dtype == env.state_space.dtype and env.state_space.contains(state)


def test_reset_signature_and_outputs(name):
    env = make(name)
    params = inspect.signature(env.reset).parameters
    assert list(params) == ["seed", "options"]
    assert params["seed"].default is None and params["options"].default is None
    obs, infos = env.reset(seed=0, options={})
    assert list(obs) == env.possible_agents and list(infos) == env.possible_agents
    assert len({id(i) for i in infos.values()}) == len(infos)  # one dict per agent
    infos[env.possible_agents[0]]["user_key"] = 1
    assert "user_key" not in infos[env.possible_agents[-1]]


def test_same_seed_same_outputs_and_unseeded_reset_continues(name):
    a, b = make(name, max_cycles=6), make(name, max_cycles=6)
    assert trace(a, 15, seed=3) == trace(b, 15, seed=3)  # 15 steps: unseeded resets inside
    assert trace(a, 4) == trace(b, 4)  # reset() without a seed, on both
    assert trace(a, 4, seed=3) == trace(make(name, max_cycles=6), 4, seed=3)
    assert trace(a, 4, seed=3) != trace(a, 4, seed=4)


def test_step_returns_five_new_dicts_in_agents_order(name):
    env = make(name, max_cycles=cycles(name, 8))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    previous = None
    shrank = False
    while env.agents:
        live = list(env.agents)
        out = env.step(sample_actions(env, rng))
        assert len(out) == 5
        for d in out:
            assert isinstance(d, dict) and list(d) == live
        assert len({id(d) for d in out}) == 5
        if previous is not None:
            assert all(x is not y for x, y in zip(out, previous))
        obs, rewards, terms, truncs, infos = out
        assert env.agents == [a for a in live if not (terms[a] or truncs[a])]
        shrank |= 0 < len(env.agents) < len(live)
        # RLlib writes "__all__" into the returned dicts; that must not leak into the env
        terms["__all__"] = truncs["__all__"] = False
        previous = out
    assert env.agents == []
    assert shrank == (name in AGENTS_DIE)  # agents left one by one: keys followed
    with pytest.raises(RuntimeError):
        env.step({})


def test_types_python_bool_and_float_and_exact_obs_dtype(name):
    env = make(name, max_cycles=cycles(name, 5))
    obs, _ = env.reset(seed=0)
    for agent, o in obs.items():
        space = env.observation_space(agent)
        assert o.dtype == space.dtype and space.contains(o)
    rng = np.random.default_rng(0)
    while env.agents:
        obs, rewards, terms, truncs, _ = env.step(sample_actions(env, rng))
        for agent in obs:
            space = env.observation_space(agent)
            assert obs[agent].dtype == space.dtype and space.contains(obs[agent])
            assert type(rewards[agent]) is float
            assert type(terms[agent]) is bool and type(truncs[agent]) is bool


@checker_warnings
def test_pettingzoo_parallel_and_aec_api_tests(name):
    parallel_api_test(make(name), num_cycles=30)
    api_test(parallel_to_aec(make(name, max_cycles=20)), num_cycles=25)  # checks obs dtypes


@checker_warnings
def test_pettingzoo_seed_max_cycles_and_render_tests(name):
    """PettingZoo's other test functions, on every env version (render: every mode)."""
    parallel_seed_test(lambda: make(name), num_cycles=20)
    max_cycles_test(importlib.import_module(f"seer_env.envs.{name}"))
    render_test(lambda render_mode=None: parallel_to_aec(make(name, render_mode=render_mode)))


def test_returned_arrays_are_fresh_not_views_of_reused_buffers(name):
    env = make(name, max_cycles=50)
    obs, _ = env.reset(seed=0)
    kept = [{a: o.copy() for a, o in obs.items()}]
    refs = [obs]
    rng = np.random.default_rng(0)
    for _ in range(10):
        obs, *_ = env.step(sample_actions(env, rng))
        kept.append({a: o.copy() for a, o in obs.items()})
        refs.append(obs)
    # what a trainer kept from earlier steps is unchanged by later steps
    for ref, copy in zip(refs, kept):
        for a in ref:
            np.testing.assert_array_equal(ref[a], copy[a])
    # arrays of different steps share no memory; neither do state() results
    assert not np.shares_memory(refs[-1][env.agents[0]], refs[-2][env.agents[0]])
    s1 = env.state()
    s2 = env.state()
    assert not np.shares_memory(s1, s2)
    # scribbling on returned arrays does not change the env
    expected = trace(cloudpickle.loads(cloudpickle.dumps(env)), 5, reset=False)
    for o in refs[-1].values():
        if o.flags.writeable:
            o[...] = 123
    s2[...] = 7
    assert trace(env, 5, reset=False) == expected


def test_array_path_returns_fresh_arrays(name):
    env = make(name)
    env.reset(seed=0)
    n = len(env.possible_agents)
    space = env.action_space(env.possible_agents[0])
    zeros = np.zeros((n, *space.shape), dtype=np.int64 if space.shape == () else space.dtype)
    first = env.step_arrays(zeros)
    saved = [x.copy() for x in first]
    second = env.step_arrays(zeros)
    for a, b, c in zip(first, saved, second):
        np.testing.assert_array_equal(a, b)
        assert not np.shares_memory(a, c)


def test_render_takes_an_argument_and_close_exists(name):
    env = make(name)
    env.reset(seed=0)
    assert env.render() is None and env.render("human") is None  # RLlib: render(mode)
    for mode in env.metadata["render_modes"]:
        e = make(name, render_mode=mode)
        e.reset(seed=0)
        e.render("rgb_array")
        e.close()
    env.close()


def test_info_keys_fixed_at_reset_and_numeric(name):
    env = make(name, max_cycles=cycles(name, 6))
    _, infos = env.reset(seed=0)
    keys = {a: list(i) for a, i in infos.items()}
    rng = np.random.default_rng(0)
    for _ in range(2 * cycles(name, 6)):
        if not env.agents:
            _, infos = env.reset()
            assert {a: list(i) for a, i in infos.items()} == keys
        _, _, _, _, infos = env.step(sample_actions(env, rng))
        for a, i in infos.items():
            assert list(i) == keys[a]
            assert all(isinstance(v, (int, float, bool, np.number)) for v in i.values())


def test_one_thread_equals_many_threads_byte_for_byte(name):
    serial = trace(make(name, max_cycles=10), 25, seed=5)
    for threads in (2, 4):
        par = make(name, max_cycles=10, executor="parallel", num_threads=threads)
        assert trace(par, 25, seed=5) == serial


def test_cloudpickled_env_continues_byte_for_byte(name):
    for executor, threads in (("serial", 1), ("parallel", 2)):
        env = make(name, max_cycles=12, executor=executor, num_threads=threads)
        trace(env, 7, seed=8)  # mid-episode, pool started
        clone = cloudpickle.loads(cloudpickle.dumps(env))
        assert clone.agents == env.agents and clone.agents is not env.agents
        assert trace(clone, 20, reset=False, action_seed=3) == trace(
            env, 20, reset=False, action_seed=3
        )
