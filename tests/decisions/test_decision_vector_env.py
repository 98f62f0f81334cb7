"""The vector env of a decision model: each instance returns a SeerDecisionEnv's bytes."""

import numpy as np
import pytest
from decision_models import TallyNumba
from gymnasium.vector import AutoresetMode

import seer_env
from seer_env.vector import SeerDecisionVectorEnv, SeerVectorEnv

M = 3
SMALL = {"width": 4, "height": 4}


def vector(name="pcs_admission_v0", config=SMALL, **options):
    options.setdefault("max_cycles", 3)
    return seer_env.vector.make(name, num_instances=M, **config, **options)


def reference(name, config, seed, **options):
    """Instance ``i``'s twin: a SeerDecisionEnv seeded ``seed``."""
    options.setdefault("max_cycles", 3)
    if name in seer_env.env_names():
        return seer_env.make(name, **config, **options, seed=seed)
    return seer_env.SeerDecisionEnv(name, dict(config), **options, seed=seed)


def actions_for(rng, n, k):
    return rng.integers(0, k, size=n).astype(np.int64)


def assert_instances_equal_their_twins(name, config, seed, steps, **options):
    vec = vector(name, config, seed=seed, **options)
    n, k = vec.agents_per_instance, vec.single_agent_action_space.n
    twins = [reference(name, config, (seed + i) % 2**64, **options) for i in range(M)]
    obs, infos = vec.reset()
    for i, twin in enumerate(twins):
        twin.reset()
        assert obs[i].tobytes() == twin.sim.observations().tobytes()
    rngs = [np.random.default_rng([seed, i]) for i in range(M)]
    restart = [False] * M
    ends = 0
    for _ in range(steps):
        needs = infos["needs_action"]
        for i, twin in enumerate(twins):
            assert needs[i].tolist() == twin.needs_action.tolist()
            times = np.full(n, np.nan)
            times[[twin.possible_agents.index(a) for a in twin.agents]] = twin.decision_times
            assert infos["decision_time"][i].tobytes() == times.tobytes()
        rows = [actions_for(r, n, k) for r in rngs]
        given = np.stack(rows)
        given[~infos["needs_action"]] = 99  # rows not asked: ignored, never checked
        obs, rewards, terms, truncs, infos = vec.step(given)
        for i, twin in enumerate(twins):
            if restart[i]:  # NEXT_STEP autoreset: the twin restarts its seed sequence too
                twin.reset()
                want = (twin.sim.observations(), np.zeros(n), np.zeros(n, bool), np.zeros(n, bool))
                restart[i] = False
            else:
                want = twin.step_arrays(rows[i])
                if not twin.agents:
                    restart[i] = True
                    ends += 1
            for got, expected in zip((obs[i], rewards[i], terms[i], truncs[i]), want):
                assert got.tobytes() == np.asarray(expected).tobytes()
    assert ends >= 2  # the run crossed autoresets
    return vec


@pytest.mark.parametrize("seed", [0, 11, 2**64 - 2])
@pytest.mark.parametrize(
    "options",
    [
        {"executor": "serial", "num_threads": 1},
        {"executor": "parallel", "num_threads": 2},
        {"executor": "parallel", "num_threads": 1},
    ],
)
def test_each_instance_returns_its_twins_bytes_across_autoresets(seed, options):
    assert_instances_equal_their_twins("pcs_admission_v0", SMALL, seed, 70, max_cycles=1, **options)


def test_a_registered_model_by_name_and_one_at_a_time_decisions():
    assert_instances_equal_their_twins(
        "pcs_admission", SMALL, 5, 60, decisions="one_at_a_time", max_cycles=1
    )


def test_a_compiled_numba_model_that_asks():
    assert_instances_equal_their_twins(
        TallyNumba, {"n": 5}, 3, 40, executor="parallel", num_threads=2, max_cycles=2
    )


def test_layout_spaces_and_metadata():
    vec = vector(seed=0)
    assert isinstance(vec, SeerDecisionVectorEnv)
    assert vec.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    n = vec.agents_per_instance
    assert vec.num_envs == vec.num_instances == M and n == 16
    obs, infos = vec.reset()
    assert obs.shape == (M, n, 12) and obs.dtype == np.float32
    assert vec.observation_space.contains(obs)
    assert infos["needs_action"].dtype == bool and infos["needs_action"].shape == (M, n)
    assert infos["decision_time"].dtype == np.float64
    assert infos["needs_action"].any(axis=1).all()  # every instance starts with requests
    assert (vec.needs_action == infos["needs_action"]).all()
    np.testing.assert_array_equal(vec.decision_times, infos["decision_time"])
    assert vec.action_space.shape == (M, n)
    _, rewards, terms, truncs, infos = vec.step(np.ones((M, n), dtype=np.int64))
    assert rewards.shape == terms.shape == truncs.shape == (M, n)
    assert rewards.dtype == np.float64
    assert vec.state().shape == (M, *vec.single_state_space.shape)
    vec.close()


def test_reset_seeds_each_instance_and_reset_mask_resets_only_those():
    vec = vector(seed=4)
    first, _ = vec.reset()
    again, _ = vec.reset(seed=4)
    assert first.tobytes() == again.tobytes()
    listed, _ = vec.reset(seed=[4, 5, 6])
    assert listed.tobytes() == first.tobytes()
    vec.step(np.ones((M, vec.agents_per_instance), dtype=np.int64))
    stepped = vec.step(np.ones((M, vec.agents_per_instance), dtype=np.int64))[0]
    obs, infos = vec.reset(seed=4, options={"reset_mask": [False, True, False]})
    assert obs[1].tobytes() == first[1].tobytes()
    assert obs[0].tobytes() == stepped[0].tobytes() and obs[2].tobytes() == stepped[2].tobytes()


# -- refusals -----------------------------------------------------------------------------------
def test_a_wrong_action_shape_or_dtype_is_refused_naming_actions():
    vec = vector(seed=0)
    vec.reset()
    n = vec.agents_per_instance
    for bad in (np.ones(M * n, dtype=np.int64), np.ones((M, n, 1)), np.ones((M, n), dtype=bool)):
        with pytest.raises(ValueError, match="actions"):
            vec.step(bad)
    with pytest.raises(ValueError, match="actions"):
        vec.step(np.full((M, n), "a"))


def test_an_action_outside_the_space_in_an_asked_row_names_the_instance_and_agent():
    vec = vector(seed=0)
    _, infos = vec.reset()
    agent = int(np.flatnonzero(infos["needs_action"][1])[0])
    name = vec.possible_agents[agent]
    digests = [env.sim.digest() for env in vec.envs]
    actions = np.ones((M, vec.agents_per_instance), dtype=np.int64)
    actions[1, agent] = 2
    with pytest.raises(ValueError, match=rf"{name} of instance 1.*must be in \[0, 2\)"):
        vec.step(actions)
    assert [env.sim.digest() for env in vec.envs] == digests  # nothing stepped
    actions[1, agent] = 1
    vec.step(actions)


def test_step_before_reset_and_the_lockstep_vector_envs_refuse():
    vec = vector(seed=0)
    with pytest.raises(RuntimeError, match="before reset"):
        vec.step(np.ones((M, 16), dtype=np.int64))
    with pytest.raises(ValueError, match="SeerDecisionVectorEnv"):
        SeerVectorEnv("pcs_admission_v0", 2)
    with pytest.raises(ValueError, match="SeerDecisionVectorEnv"):
        seer_env.vector.make_async("pcs_admission_v0", 2)
    with pytest.raises(ValueError, match="render_mode"):
        seer_env.vector.make("pcs_admission_v0", 2, render_mode="ansi")
    assert isinstance(seer_env.vector.make("pcs_v1", 2, width=4, height=4), SeerVectorEnv)
