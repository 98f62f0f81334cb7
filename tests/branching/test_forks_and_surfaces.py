"""Snapshots on the other surfaces: vector and async vector instances, forks, AEC, RLlib, TorchRL.

Every fork equals a fresh env restored from the same snapshot and given the same actions; a
snapshot moves between a ParallelEnv and any vector instance, on any executor.
"""

import importlib.util
import pickle

import numpy as np
import pytest

from seer_env import vector
from seer_env.envs import aircraft_v0, pcs_v0, pcs_v1
from seer_env.snapshot import Snapshot


def random_rows(space, rows, rng):
    if hasattr(space, "n"):
        return rng.integers(space.n, size=rows)
    return rng.uniform(space.low, space.high, size=(rows, *space.shape)).astype(np.float32)


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize(
    "module,config", [(pcs_v0, dict(width=4, height=4)), (aircraft_v0, dict(num_uavs=8))]
)
def test_each_fork_equals_a_fresh_env_restored_and_given_the_same_actions(module, config, threads):
    env = module.parallel_env(**config, max_cycles=40)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    space = env.action_space(env.possible_agents[0])
    for _ in range(5):
        row = random_rows(space, len(env.possible_agents), rng)
        env.step({a: row[i] for i, a in enumerate(env.possible_agents) if a in env.agents})
    snap = env.snapshot()
    k = 5
    forks = env.fork(k, executor="parallel" if threads > 1 else "serial", num_threads=threads)
    a = forks.agents_per_instance
    plans = [random_rows(space, k * a, rng) for _ in range(8)]
    for plan in plans:
        forks.step(plan)
    for i in range(k):
        fresh = module.parallel_env(**config, max_cycles=40)
        fresh.restore(snap)
        for plan in plans:
            rows = plan[i * a : (i + 1) * a]
            fresh.step(
                {n: rows[j] for j, n in enumerate(fresh.possible_agents) if n in fresh.agents}
            )
        assert forks.sim.digest(i) == fresh.sim.digest(), f"branch {i}"
    forks.close()


def test_a_vector_instance_snapshot_restores_into_a_parallel_env_and_back():
    vec = vector.make("pcs_v1", 3, width=4, height=4, seed=0, executor="parallel", num_threads=2)
    vec.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(4):
        vec.step(random_rows(vec.single_action_space, vec.num_envs, rng))
    snap = vec.snapshot(2)
    env = pcs_v1.parallel_env(width=4, height=4)
    env.restore(snap)
    assert env.sim.digest() == vec.sim.digest(2)
    env.step({a: 1 for a in env.agents})
    other = vector.make("pcs_v1", 2, width=4, height=4, executor="serial")
    other.restore(0, env.snapshot())  # a fresh vector env: instance 1 autoresets on its step
    assert other.sim.digest(0) == env.sim.digest()
    other.step(np.ones(other.num_envs, dtype=np.int64))


def test_the_async_vector_env_snapshots_and_restores_by_instance():
    env = vector.make_async("pcs_v0", 4, 2, width=2, height=2, seed=0)
    env.reset(seed=1)
    env.step(np.zeros(env.num_envs, dtype=np.int64))
    snap = env.snapshot(3)
    env.restore(0, snap)
    assert env.batches[0].sim.digest(0) == env.batches[1].sim.digest(1)
    with pytest.raises(ValueError, match="instance must be in"):
        env.snapshot(4)
    env.close()


def test_a_vector_snapshot_of_an_ended_instance_autoresets_where_restored():
    vec = vector.make("pcs_v0", 2, width=2, height=2, max_cycles=2, seed=0)
    vec.reset(seed=0)
    for _ in range(2):
        vec.step(np.zeros(vec.num_envs, dtype=np.int64))
    snap = vec.snapshot(0)
    assert snap.episode["agents"] == []
    env = pcs_v0.parallel_env(width=2, height=2, max_cycles=2)
    env.restore(snap)
    assert env.agents == []


def test_the_aec_env_continues_exactly_from_a_snapshot_taken_mid_cycle():
    env = pcs_v0.env(width=2, height=2, executor="serial")
    env.reset(seed=1)
    for _ in range(6):  # one cycle and a half: two actions buffered
        env.step(1)
    snap = env.snapshot()
    first = []
    for i in range(12):
        env.step(i % 3)
        first.append((env.agent_selection, dict(env.rewards), env.last()[1]))
    other = pcs_v0.env(width=2, height=2, executor="parallel", num_threads=2)
    other.restore(snap)  # a fresh env: restore starts the episode, as reset() would
    second = []
    for i in range(12):
        other.step(i % 3)
        second.append((other.agent_selection, dict(other.rewards), other.last()[1]))
    assert first == second
    assert env.unwrapped.sim.digest() == other.unwrapped.sim.digest()
    with pytest.raises(ValueError, match="AEC env's snapshot"):
        other.restore(snap.parallel)


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray[rllib]")
def test_the_rllib_env_snapshots_and_restores():
    from seer_env.integrations.rllib import SeerRLlibEnv

    env = SeerRLlibEnv(pcs_v0.parallel_env(width=2, height=2, seed=0))
    env.reset(seed=3)
    env.step({a: 1 for a in env.agents})
    snap = env.snapshot()
    expected = pickle.dumps(env.step({a: 2 for a in env.agents}))
    other = SeerRLlibEnv(pcs_v0.parallel_env(width=2, height=2, seed=5))
    obs, infos = other.restore(snap)
    assert set(obs) == set(other.agents)
    assert pickle.dumps(other.step({a: 2 for a in other.agents})) == expected


@pytest.mark.skipif(importlib.util.find_spec("torchrl") is None, reason="needs torchrl")
def test_the_torchrl_batched_env_restores_into_a_tensordict_to_roll_out_from():
    from seer_env.integrations.torchrl_batched import SeerBatchedEnv

    source = pcs_v0.parallel_env(width=4, height=4)
    source.reset(seed=2)
    for _ in range(3):
        source.step({a: 1 for a in source.agents})
    env = SeerBatchedEnv("pcs_v0", 3, width=4, height=4, seed=0)
    env.reset()
    td = env.restore(source.snapshot())  # one snapshot, three branches
    obs = td["agents", "observation"]
    expected = source.sim.observations()
    for i in range(3):
        assert obs[i].numpy().tobytes() == expected.tobytes()
    rollout = env.rollout(4, tensordict=td, auto_reset=False)
    assert rollout.batch_size[:2] == (3, 4)
    snaps = env.snapshot()
    assert len(snaps) == 3 and all(isinstance(s, Snapshot) for s in snaps)
    assert len({pickle.dumps(s.episode) for s in snaps}) == 1
    with pytest.raises(ValueError, match="one snapshot per instance"):
        env.restore(snaps[:2])
