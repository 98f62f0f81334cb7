"""Snapshots between two returns: the waiting agents, held events and owed rewards travel."""

import pickle

import pytest

import seer_env
from seer_env.snapshot import Snapshot
from seer_env.testing import hash_policy


def admission(**options):
    return seer_env.SeerDecisionEnv(
        "pcs_admission", {"width": 6, "height": 4}, max_cycles=4, **options
    )


def play(env, obs, infos, record):
    """Runs the episode on from (obs, infos); appends every return to `record`."""
    while env.agents:
        record.append(sorted((a, infos[a]["decision_time"], obs[a].tobytes()) for a in env.agents))
        actions = {a: hash_policy(a, obs[a], env.action_space(a)) for a in env.agents}
        obs, rewards, _, _, infos = env.step(actions)
        record.append(sorted(rewards.items()))
    return env.sim.digest()


@pytest.mark.parametrize(
    ("taken", "resumed"),
    [
        ({"executor": "serial", "num_threads": 1}, {"executor": "parallel", "num_threads": 2}),
        ({"executor": "parallel", "num_threads": 2}, {"executor": "serial", "num_threads": 1}),
        ({"decisions": "one_at_a_time"}, {"decisions": "one_at_a_time"}),
    ],
)
@pytest.mark.parametrize("after", [1, 7, 40])
def test_a_restored_env_continues_exactly_as_the_original(taken, resumed, after):
    env = admission(**taken)
    obs, infos = env.reset(seed=9)
    head = []
    for _ in range(after):
        head.append(sorted(env.agents))
        actions = {a: hash_policy(a, obs[a], env.action_space(a)) for a in env.agents}
        obs, _, _, _, infos = env.step(actions)
    snap = env.snapshot()
    original = []
    end = play(env, obs, infos, original)

    fresh = admission(**resumed)
    obs2, infos2 = fresh.restore(Snapshot.from_bytes(bytes(snap)))
    assert sorted(obs2) == sorted(fresh.agents)
    assert {a: o.tobytes() for a, o in obs2.items()} == {a: o.tobytes() for a, o in obs.items()}
    restored = []
    assert play(fresh, obs2, infos2, restored) == end
    assert restored == original


def test_a_snapshot_of_one_decision_mode_is_refused_by_the_other():
    env = admission(decisions="one_at_a_time")
    env.reset(seed=0)
    snap = env.snapshot()
    with pytest.raises(ValueError, match="decisions=one_at_a_time"):
        admission().restore(snap)


def test_a_pickled_env_waiting_for_actions_continues_exactly():
    env = admission(executor="serial", num_threads=1)
    obs, infos = env.reset(seed=2)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.agents == env.agents
    a, b = [], []
    assert play(env, obs, infos, a) == play(copy, obs, infos, b)
    assert a == b
