"""``state()`` and ``neighbours()`` on the vector envs equal the single envs', per instance."""

import pickle

import numpy as np
import pytest

import seer_env
from seer_env import vector

PCS = dict(width=3, height=2, phones_per_cell=4, executor="serial")
UAVS = dict(num_uavs=12, substeps=2, executor="serial")


def singles(name, m, config, seed):
    envs = [seer_env.make(name, seed=seed + i, **config) for i in range(m)]
    for env in envs:
        env.reset()
    return envs


@pytest.mark.parametrize(("name", "config"), [("pcs_v0", PCS), ("aircraft_v0", UAVS)])
def test_state_and_neighbours_equal_the_single_envs(name, config):
    m = 3
    venv = vector.make(name, m, seed=10, **config)
    venv.reset()
    envs = singles(name, m, config, 10)
    rng = np.random.default_rng(0)
    for _ in range(4):
        actions = np.stack([venv.single_action_space.sample() for _ in range(venv.num_envs)])
        if venv._discrete:
            actions = rng.integers(0, venv.single_action_space.n, venv.num_envs)
        venv.step(actions)
        per = np.split(actions, m)
        for env, a in zip(envs, per):
            env.step({ag: a[j] for j, ag in enumerate(env.possible_agents) if ag in env.agents})
        state = venv.state()
        assert state.shape == (m, *venv.single_state_space.shape) and state.dtype == np.float32
        table = venv.neighbours()
        assert table.dtype == np.int64 and table.shape[:2] == (m, venv.agents_per_instance)
        for i, env in enumerate(envs):
            assert state[i].tobytes() == env.state().tobytes()
            assert table[i].tobytes() == env.neighbours().tobytes()
    venv.close()


def test_pcs_neighbours_are_one_static_table_without_copies():
    venv = vector.make("pcs_v0", 4, **PCS)
    table = venv.neighbours()  # static: no reset needed
    assert table.shape == (4, 6, 4) and not table.flags.writeable
    assert np.shares_memory(table[0], table[3])


def test_aircraft_neighbours_survive_pickling_and_need_a_reset():
    venv = vector.make("aircraft_v0", 2, seed=0, **UAVS)
    with pytest.raises(RuntimeError, match=r"neighbours\(\) called before reset\(\)"):
        venv.neighbours()
    with pytest.raises(RuntimeError, match=r"state\(\) called before reset\(\)"):
        venv.state()
    venv.reset()
    venv.step(np.zeros((venv.num_envs, 4), np.float32))
    copy = pickle.loads(pickle.dumps(venv))
    assert copy.neighbours().tobytes() == venv.neighbours().tobytes()
    assert copy.state().tobytes() == venv.state().tobytes()


def test_async_vector_env_state_and_neighbours_concatenate_the_batches():
    env = vector.make_async("pcs_v0", 4, num_batches=2, seed=0, **PCS)
    sync = vector.make("pcs_v0", 4, seed=0, **PCS)
    env.reset()
    sync.reset()
    assert env.state().tobytes() == sync.state().tobytes()
    assert env.neighbours().shape == (4, 6, 4)
    env.close()
