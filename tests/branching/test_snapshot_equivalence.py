"""restore() then continue returns the bytes of the uninterrupted run, on every env surface.

Each case steps a reference env with fixed actions, snapshots it at several points, restores
each snapshot into a fresh env (of another executor and thread count: serial into parallel-2
and the reverse) and compares every later step's outputs and the runtime digest, byte for
byte, with the reference's.
"""

import copy
import pickle

import numpy as np
import pytest

from seer_env.envs import aircraft_v0, aircraft_v1, pcs_v0, pcs_v1

ENVS = {
    "pcs_v0": (pcs_v0, dict(width=6, height=6, max_cycles=30)),
    "pcs_v1": (pcs_v1, dict(width=4, height=4, max_cycles=30)),
    "aircraft_v0": (aircraft_v0, dict(num_uavs=12, max_cycles=30)),
    "aircraft_v1": (aircraft_v1, dict(num_uavs=8, max_cycles=30)),
}
RUNTIMES = [
    (dict(executor="serial"), dict(executor="parallel", num_threads=2)),
    (dict(executor="parallel", num_threads=2), dict(executor="serial")),
    (dict(executor="parallel", num_threads=3), dict(executor="parallel", num_threads=1)),
]


def actions_for(env, seed, steps):
    rng = np.random.default_rng(seed)
    space = env.action_space(env.possible_agents[0])
    out = []
    for _ in range(steps):
        if hasattr(space, "n"):
            out.append({a: int(rng.integers(space.n)) for a in env.possible_agents})
        else:
            out.append(
                {
                    a: rng.uniform(space.low, space.high).astype(np.float32)
                    for a in env.possible_agents
                }
            )
    return out


def live(actions, env):
    return {a: actions[a] for a in env.agents}


def run(env, actions, start, stop):
    frames = []
    for t in range(start, stop):
        if not env.agents:
            break
        frames.append(pickle.dumps(env.step(live(actions[t], env))))
    frames.append(pickle.dumps((env.sim.digest(), list(env.agents))))
    return frames


@pytest.mark.parametrize("name", sorted(ENVS))
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("runtimes", RUNTIMES, ids=["serial->par2", "par2->serial", "par3->par1"])
def test_restore_then_continue_equals_the_uninterrupted_run(name, seed, runtimes):
    module, config = ENVS[name]
    first, second = runtimes
    reference = module.parallel_env(**config, **first)
    reference.reset(seed=seed)
    actions = actions_for(reference, seed, 30)
    points = (0, 3, 11)
    snapshots, frames = {}, []
    for t in range(30):
        if t in points:
            snapshots[t] = reference.snapshot()
        if not reference.agents:
            break
        frames.append(pickle.dumps(reference.step(live(actions[t], reference))))
    frames.append(pickle.dumps((reference.sim.digest(), list(reference.agents))))
    for t, snap in snapshots.items():
        fresh = module.parallel_env(**config, **second)
        fresh.restore(snap)
        assert run(fresh, actions, t, 30) == frames[t:], f"restored at step {t}"


@pytest.mark.parametrize("name", sorted(ENVS))
def test_restore_returns_the_observations_at_the_snapshot(name):
    module, config = ENVS[name]
    env = module.parallel_env(**config)
    obs0, infos0 = env.reset(seed=4)
    for _t, act in enumerate(actions_for(env, 4, 5)):
        obs, *_ = env.step(live(act, env))
    snap = env.snapshot()
    other = module.parallel_env(**config)
    restored, infos = other.restore(snap)
    assert list(restored) == env.agents
    for agent in env.agents:
        assert restored[agent].tobytes() == obs[agent].tobytes()


@pytest.mark.parametrize("name", sorted(ENVS))
def test_pickle_and_deepcopy_continue_like_the_original(name):
    module, config = ENVS[name]
    env = module.parallel_env(**config, executor="parallel", num_threads=2)
    env.reset(seed=6)
    actions = actions_for(env, 6, 20)
    for t in range(4):
        env.step(live(actions[t], env))
    copies = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    expected = run(env, actions, 4, 20)
    for other in copies:
        assert run(other, actions, 4, 20) == expected


def test_a_snapshot_after_the_episode_ended_restores_an_ended_episode():
    env = pcs_v0.parallel_env(width=2, height=2, max_cycles=3)
    env.reset(seed=0)
    for _ in range(3):
        env.step({a: 0 for a in env.agents})
    assert env.agents == []
    other = pcs_v0.parallel_env(width=2, height=2, max_cycles=3)
    obs, infos = other.restore(env.snapshot())
    assert other.agents == [] and obs == {}
    with pytest.raises(RuntimeError, match="no live agents"):
        other.step({})
    other.reset(seed=0)  # and a new episode starts as usual


def test_the_snapshot_keeps_the_seed_sequence_of_unseeded_resets():
    env = pcs_v0.parallel_env(width=2, height=2, max_cycles=4, seed=11)
    env.reset()
    env.step({a: 1 for a in env.agents})
    other = pcs_v0.parallel_env(width=2, height=2, max_cycles=4)
    other.restore(env.snapshot())
    env.reset()
    other.reset()  # the next episode's seed continues the snapshot's sequence
    assert env.sim.digest() == other.sim.digest()


def test_agents_keep_the_callers_order():
    env = aircraft_v0.parallel_env(num_uavs=6, max_cycles=10)
    env.reset(seed=1)
    env.agents = env.agents[::-1]
    snap = env.snapshot()
    other = aircraft_v0.parallel_env(num_uavs=6, max_cycles=10)
    obs, _ = other.restore(snap)
    assert other.agents == env.agents and list(obs) == env.agents


def test_the_default_checks_still_due_travel_with_the_snapshot():
    env = pcs_v0.parallel_env(width=2, height=2, check_steps=5)
    env.reset(seed=0)
    env.step({a: 0 for a in env.agents})
    other = pcs_v0.parallel_env(width=2, height=2, check_steps=0)
    other.restore(env.snapshot())
    assert other.sim.checked_steps_left == env.sim.checked_steps_left == 4


def test_a_load_behind_the_envs_back_resyncs_its_bookkeeping():
    # env.sim.load used to leave the wrapper stale: pcs's next step said "no live agents",
    # aircraft's agents listed 3 UAVs while its state said 16 were alive.
    env = aircraft_v0.parallel_env(num_uavs=16, max_cycles=50)
    env.reset(seed=2)
    actions = actions_for(env, 2, 50)
    for t in range(5):
        env.step(live(actions[t], env))
    blob, agents, cycles = env.sim.save(), list(env.agents), env._cycles
    other = aircraft_v0.parallel_env(num_uavs=16, max_cycles=50)
    other.reset(seed=9)
    for t in range(20):
        if not other.agents:
            break
        other.step(live(actions[t], other))
    other.sim.load(blob)
    expected = run(env, actions, 5, 50)
    assert run(other, actions, 5, 50) == expected
    assert other._cycles >= cycles and len(agents) == 16
    pcs = pcs_v0.parallel_env(width=2, height=2, max_cycles=3)
    pcs.reset(seed=0)
    blob = pcs.sim.save()
    for _ in range(3):
        pcs.step({a: 0 for a in pcs.agents})
    pcs.sim.load(blob)
    pcs.step({a: 0 for a in pcs.agents})  # live again, as the loaded state says
