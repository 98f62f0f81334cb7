"""The vector env: instance i is byte-identical to a single env seeded s + i."""

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from seer_env import vector
from seer_env.envs import pcs_v0

CFG = dict(width=4, height=3, max_cycles=6, move_interval=200)


def rows(obs_dict):
    return np.stack(list(obs_dict.values()))


@pytest.mark.parametrize("executor,threads", [("serial", 1), ("parallel", 1), ("parallel", 3)])
@pytest.mark.parametrize("m", [1, 3, 8])
def test_instances_equal_single_envs_through_autoreset(m, executor, threads):
    venv = vector.make("pcs_v0", num_envs=m, executor=executor, num_threads=threads, **CFG)
    singles = [pcs_v0.parallel_env(**CFG) for _ in range(m)]
    a = len(singles[0].possible_agents)
    obs, infos = venv.reset(seed=100)
    assert (
        obs.tobytes()
        == np.concatenate([rows(e.reset(seed=100 + i)[0]) for i, e in enumerate(singles)]).tobytes()
    )
    rng = np.random.default_rng(1)
    for _ in range(20):  # crosses two autoresets (max_cycles 6)
        actions = rng.integers(0, 11, size=venv.num_envs)
        obs, rew, term, trunc, infos = venv.step(actions)
        for i, env in enumerate(singles):
            sl = slice(i * a, (i + 1) * a)
            if not env.agents:  # the vector env autoreset this instance
                o, inf = env.reset()
                assert obs[sl].tobytes() == rows(o).tobytes()
                assert not rew[sl].any() and not term[sl].any() and not trunc[sl].any()
                continue
            o, r, te, tr, inf = env.step(dict(zip(env.agents, actions[sl].tolist())))
            assert obs[sl].tobytes() == rows(o).tobytes()
            assert rew[sl].tolist() == list(r.values())
            assert term[sl].tolist() == list(te.values())
            assert trunc[sl].tolist() == list(tr.values())
            assert infos["blocks"][sl].tolist() == [x["blocks"] for x in inf.values()]


def test_gymnasium_vector_conventions():
    venv = vector.make("pcs_v0", num_envs=2, **CFG)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert venv.num_envs == 2 * 12
    assert venv.single_action_space.n == 11
    obs, infos = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    assert infos["_blocks"].all() and infos["blocks"].shape == (24,)
    obs2, *_ = venv.step(np.zeros(24, dtype=np.int64))
    assert obs2 is not venv.sim.observations  # fresh arrays


def test_reset_mask_resets_only_masked_instances():
    venv = vector.make("pcs_v0", num_envs=3, **CFG)
    venv.reset(seed=5)
    for _ in range(3):
        venv.step(np.zeros(36, dtype=np.int64))
    before = [venv.sim.steps(i) for i in range(3)]
    venv.reset(options={"reset_mask": np.array([False, True, False])})
    assert [venv.sim.steps(i) for i in range(3)] == [before[0], 0, before[2]]
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.ones(5, dtype=bool)})


def test_bad_steps_and_an_empty_batch_are_refused_and_the_env_still_steps():
    venv = vector.make("pcs_v0", num_envs=2, **CFG)
    with pytest.raises(RuntimeError, match="before reset"):
        venv.step(np.zeros(24, dtype=np.int64))
    venv.reset(seed=1)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError, match="outside the action space"):
        venv.step(np.full(24, 11, dtype=np.int64))
    venv.step(np.zeros(24, dtype=np.int64))  # still works
    with pytest.raises(ValueError, match="num_envs"):
        vector.make("pcs_v0", num_envs=0, **CFG)


def test_a_registered_model_without_an_env_module_runs_in_the_vector_env():
    by_model = vector.make("pcs", 2, width=2, height=2, max_cycles=10, seed=0)
    by_env = vector.make("pcs_v0", 2, width=2, height=2, max_cycles=10, seed=0)
    for vec in (by_model, by_env):
        vec.reset(seed=1)
        for _ in range(3):
            vec.step(np.ones(vec.num_envs, dtype=np.int64))
    assert [by_model.sim.digest(i) for i in range(2)] == [by_env.sim.digest(i) for i in range(2)]
    with pytest.raises(ValueError, match=r"name must be an env .* or a registered model"):
        vector.make("nope", 2)
    with pytest.raises(ValueError, match="model 'phold' has no agents"):
        vector.make("phold", 2)
