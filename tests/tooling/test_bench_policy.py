import numpy as np
import pytest

from bench.policy import MlpPolicy, run_decision_loop, torch_available
from seer_env.envs import aircraft_v0


def test_mlp_policy_shapes_range_and_determinism():
    policy = MlpPolicy(41, 4, hidden=(32, 16), seed=3)
    obs = np.random.default_rng(0).standard_normal((100, 41)).astype(np.float32)
    actions = policy(obs)
    assert actions.shape == (100, 4) and actions.dtype == np.float32
    assert (np.abs(actions) <= 1.0).all()
    assert np.array_equal(actions, MlpPolicy(41, 4, hidden=(32, 16), seed=3)(obs))
    assert not np.array_equal(actions, MlpPolicy(41, 4, hidden=(32, 16), seed=4)(obs))
    with pytest.raises(ValueError, match="obs"):
        policy(obs[:, :40])


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(obs_dim=0, act_dim=4), "obs_dim"),
        (dict(obs_dim=4, act_dim=True), "act_dim"),
        (dict(obs_dim=4, act_dim=4, hidden=(8, 0)), "hidden"),
        (dict(obs_dim=4, act_dim=4, backend="jax"), "backend"),
    ],
)
def test_mlp_policy_validates_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        MlpPolicy(**kwargs)


@pytest.mark.skipif(not torch_available(), reason="torch not installed")
def test_torch_backend_matches_numpy():
    obs = np.random.default_rng(0).standard_normal((64, 41)).astype(np.float32)
    a = MlpPolicy(41, 4, seed=1)(obs)
    b = MlpPolicy(41, 4, seed=1, backend="torch")(obs)
    np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("api", ["arrays", "dicts"])
def test_decision_loop_reports_policy_and_env_time(api):
    env = aircraft_v0.parallel_env(num_uavs=16, arena_size=20.0, ceiling=30.0, max_cycles=15)
    policy = MlpPolicy.for_env(env, hidden=(16,))
    report = run_decision_loop(env, policy, steps=20, warmup=2, api=api)
    assert report.policy.shape == report.env.shape == (20,)
    assert (report.policy > 0).all() and (report.env > 0).all()
    assert (report.runtime <= report.env).all()
    assert report.resets >= 1  # max_cycles=15 < 22 steps: the loop resets the env
    summary = report.summary()
    assert summary["agents"] == 16 and summary["total_mean_ms"] > 0
    assert "policy" in str(report) and "env" in str(report)


def test_decision_loop_validates_arguments():
    env = aircraft_v0.parallel_env(num_uavs=4)
    policy = MlpPolicy.for_env(env)
    for kwargs, name in [
        (dict(steps=0), "steps"),
        (dict(steps=1, warmup=-1), "warmup"),
        (dict(steps=1, api="x"), "api"),
    ]:
        with pytest.raises(ValueError, match=name):
            run_decision_loop(env, policy, **kwargs)
