"""Gymnasium: JointEnv, and AsyncVectorEnv of our envs with fork, forkserver and spawn."""

import functools

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from envcases import ENV_NAMES, SMALL, checker_warnings, make, sample_array
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

from seer_env.integrations.gymnasium import JointEnv, make_joint

pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")

MAX_CYCLES = 5
STEPS = 13  # two episode ends, each followed by a NEXT_STEP autoreset step


def joint_fn(name, **overrides):
    cfg = {**SMALL.get(name, {}), "max_cycles": MAX_CYCLES, **overrides}
    return functools.partial(make_joint, name, **cfg)


def flat(x):
    """Comparable bytes of (nested dicts of) arrays and scalars, dtypes and key order included."""
    if isinstance(x, dict):
        return [(k, flat(v)) for k, v in x.items()]
    arr = np.asarray(x)
    return (arr.dtype.str, arr.shape, arr.tobytes())


@checker_warnings
@pytest.mark.parametrize("name", ENV_NAMES)
def test_joint_env_passes_gymnasium_check_env(name):
    check_env(
        make_joint(name, **SMALL.get(name, {}), max_cycles=MAX_CYCLES), skip_render_check=True
    )


@pytest.mark.parametrize("name", ENV_NAMES)
def test_joint_env_matches_the_parallel_env(name):
    joint = joint_fn(name)()
    env = make(name, max_cycles=MAX_CYCLES)
    obs, info = joint.reset(seed=2)
    ref_obs, ref_infos = env.reset(seed=2)
    assert obs.shape == joint.observation_space.shape and joint.observation_space.contains(obs)
    assert obs.tobytes() == np.stack(list(ref_obs.values())).tobytes()
    keys = list(ref_infos[env.possible_agents[0]])
    assert list(info) == ["alive", "rewards", *keys]
    rng = np.random.default_rng(0)
    while env.agents:
        act = sample_array(env, rng)
        live = list(env.agents)
        obs, reward, terminated, truncated, info = joint.step(act)
        o, r, te, tr, inf = env.step({a: act[env._agent_index[a]] for a in live})
        for a in live:
            i = env._agent_index[a]
            assert obs[i].tobytes() == o[a].tobytes()
            assert info["rewards"][i] == r[a]
            assert [info[k][i] for k in keys] == list(inf[a].values())
        assert type(reward) is float and reward == pytest.approx(sum(r.values()))
        assert info["alive"].tolist() == [a in env.agents for a in env.possible_agents]
        assert (terminated or truncated) == (not env.agents)
        assert joint.observation_space.contains(obs)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_joint_env_pickles_mid_episode(name):
    joint = joint_fn(name, executor="parallel", num_threads=2)()
    joint.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(2):
        joint.step(sample_array(joint.env, rng))
    clone = cloudpickle.loads(cloudpickle.dumps(joint))
    for _ in range(3):
        act = sample_array(joint.env, rng)
        assert flat(clone.step(act)[0]) == flat(joint.step(act)[0])


def expected_vector_run(name, copies, seed, actions):
    """Copy i: a single JointEnv seeded seed + i, NEXT_STEP autoreset done by hand."""
    envs = [joint_fn(name)() for _ in range(copies)]
    resets = [e.reset(seed=seed + i) for i, e in enumerate(envs)]
    out = [np.stack([o for o, _ in resets])]
    needs_reset = [False] * copies
    for act in actions:
        obs, rew, term, trunc = [], [], [], []
        for i, env in enumerate(envs):
            if needs_reset[i]:  # NEXT_STEP: this step only resets copy i
                o, _ = env.reset()
                r, te, tr = 0.0, False, False
            else:
                o, r, te, tr, _ = env.step(act[i])
            needs_reset[i] = te or tr
            obs.append(o)
            rew.append(r)
            term.append(te)
            trunc.append(tr)
        out.append((np.stack(obs), np.array(rew), np.array(term), np.array(trunc)))
    return out


def run_vector(venv, template, seed, steps):
    """Reset and step ``venv``; ``template`` (an env of the same kind) samples the actions."""
    obs, infos = venv.reset(seed=seed)
    out = [obs.copy()]
    rng = np.random.default_rng(7)
    actions = []
    for _ in range(steps):
        act = np.stack([sample_array(template, rng) for _ in range(venv.num_envs)])
        actions.append(act)
        obs, rew, term, trunc, infos = venv.step(act)
        out.append((obs.copy(), rew.copy(), term.copy(), trunc.copy()))
    return out, actions, infos


@pytest.mark.parametrize("context", ["fork", "forkserver", "spawn"])
@pytest.mark.parametrize("name", ENV_NAMES)
def test_async_vector_env_equals_single_envs_seeded_s_plus_i(name, context):
    copies = 3
    # the pool runs in the parent before the fork
    parent = make(name, executor="parallel", num_threads=2)
    parent.reset(seed=0)
    parent.step_arrays(sample_array(parent, np.random.default_rng(0)))
    fns = [joint_fn(name, executor="parallel", num_threads=2) for _ in range(copies)]
    venv = gym.vector.AsyncVectorEnv(fns, context=context)
    try:
        assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        assert venv.num_envs == copies
        assert venv.single_observation_space == fns[0]().observation_space
        got, actions, infos = run_vector(venv, parent, seed=4, steps=STEPS)
    finally:
        venv.close()
    expected = expected_vector_run(name, copies, 4, actions)
    assert got[0].tobytes() == expected[0].tobytes()
    for g, e in zip(got[1:], expected[1:]):
        assert flat(g[0]) == flat(e[0])
        np.testing.assert_array_equal(g[1], e[1])
        assert g[2].tolist() == e[2].tolist() and g[3].tolist() == e[3].tolist()
    truncated_at = [i for i, step in enumerate(got[1:], 1) if step[3].all()]
    assert truncated_at == [MAX_CYCLES, 2 * MAX_CYCLES + 1]  # +1: the autoreset step
    # infos: dicts of arrays with `_key` masks
    assert infos["alive"].shape[0] == copies and infos["_alive"].all()
    parent.step_arrays(sample_array(parent, np.random.default_rng(1)))  # parent unharmed


def test_sync_and_async_vector_envs_agree():
    name = ENV_NAMES[0]
    parent = make(name)
    outs = []
    for cls in (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv):
        venv = cls([joint_fn(name) for _ in range(2)])
        try:
            got, _, _ = run_vector(venv, parent, seed=9, steps=STEPS)
        finally:
            venv.close()
        outs.append([[flat(x) for x in (s if isinstance(s, tuple) else (s,))] for s in got])
    assert outs[0] == outs[1]


def test_reset_mask_resets_only_masked_copies():
    name = ENV_NAMES[0]
    venv = gym.vector.AsyncVectorEnv([joint_fn(name) for _ in range(2)], context="fork")
    try:
        venv.reset(seed=0)
        act = np.zeros((2, *venv.single_action_space.shape), dtype=venv.single_action_space.dtype)
        stepped, *_ = venv.step(act)
        obs, _ = venv.reset(options={"reset_mask": np.array([True, False])})
        assert obs[1].tobytes() == stepped[1].tobytes()
        assert obs[0].tobytes() != stepped[0].tobytes()
    finally:
        venv.close()


def test_joint_env_rejects_non_seer_envs():
    with pytest.raises(ValueError, match="env must be"):
        JointEnv(object())
