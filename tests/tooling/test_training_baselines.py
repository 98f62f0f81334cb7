"""The baselines: the learnable task has something to learn, and a short PPO run learns it."""

import numpy as np
import pytest

from training import policies
from training.__main__ import day_averages_comparable, plot, table
from training.evaluate import TorchPolicy, episode_returns

SEEDS = [100, 101]


def score(env_name, config, policy):
    return float(np.mean(episode_returns(env_name, config, lambda env, s: policy, SEEDS)))


def test_rush_hour_rule_beats_every_constant_guard_on_pcs_v1():
    config = dict(num_threads=1)
    constants = [score("pcs_v1", config, policies.ConstantGuard(g)) for g in range(6)]
    rule = score("pcs_v1", config, policies.RushHourGuard(4, 1))
    assert rule > max(constants) + 10  # per cell and episode: about -117 vs -138


def test_short_ppo_on_small_pcs_beats_random():
    pytest.importorskip("torch")
    from gymnasium import spaces

    from training.ppo import PPOConfig, train

    config = dict(num_threads=1)  # pcs_v1's defaults: 8x8 cells, 96 steps
    cfg = PPOConfig(num_envs=2, num_steps=48, updates=6, env_config=config)
    out = train("pcs_v1", cfg, seed=3, log=lambda line: None)
    assert [h["update"] for h in out["history"]] == list(range(1, 7))
    space = spaces.Discrete(11)
    ppo = score("pcs_v1", config, TorchPolicy(out["agent"], space))
    rand = score("pcs_v1", config, policies.RandomPolicy(space, 0))
    assert ppo > rand + 10  # about -150 vs -171 per cell and episode


def test_goal_seeker_reaches_goals_without_crashing():
    import seer_env
    from seer_env.envs.aircraft import uav_states

    env = seer_env.make("aircraft_v1", num_threads=1, seed=0)
    pol = policies.GoalSeeker(env.arena_size)
    env.reset(seed=0)
    obs = env.sim.observations()
    while env.agents:
        obs, *_ = env.step_arrays(pol(obs))
    states = uav_states(env.sim)
    assert states["alive"].all()
    assert np.linalg.norm(states["goal"] - states["body"][:, 0:3], axis=1).max() < 3.0


def test_table_formats_mean_and_sd():
    result = {
        "task": "pcs_v1",
        "size": "small",
        "random": [-2.0, -4.0],
        "best_constant": {"name": "constant guard 3", "returns": [-1.0, -1.0]},
        "ppo": {
            "runs": [{"score": 1.0, "train_seconds": 10.0}, {"score": 3.0, "train_seconds": 20.0}]
        },
        "env_steps": 1000,
    }
    text = table([result])
    row = "| pcs_v1 | small | -3.0 ± 1.0 | -1.0 ± 0.0 (constant guard 3) | - | 2.0 ± 1.0 |"
    assert row + " nan ± nan |" in text  # no greedy score recorded
    assert "| 2 | 1,000 | 15 s |" in text  # seeds, env steps, wall per seed


@pytest.mark.parametrize("num_steps, comparable", [(96, True), (192, True), (16, False)])
def test_episode_baselines_are_drawn_only_beside_whole_episode_rollouts(
    tmp_path, monkeypatch, num_steps, comparable
):
    """A 16-step rollout from midnight is not a day: the day-average lines are left out."""
    pytest.importorskip("matplotlib")
    result = {
        "task": "pcs_v1",
        "size": "small",
        "max_cycles": 96,
        "random": [-170.0, -172.0],
        "best_rule": {"name": "rush hour", "returns": [-117.0, -116.0]},
        "ppo": {
            "config": {"num_steps": num_steps},
            "runs": [{"seed": 0, "curve": [(16, -1.5), (32, -1.4)]}],
        },
    }
    assert day_averages_comparable(result) is comparable
    import matplotlib.pyplot as plt

    drawn = []
    real = plt.Axes.axhline
    monkeypatch.setattr(
        plt.Axes, "axhline", lambda ax, y, **kw: drawn.append(y) or real(ax, y, **kw)
    )
    plot(result, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 0
    assert len(drawn) == (2 if comparable else 0)


# TorchRL 0.14's collectors module warns about itself on import.
_TORCHRL_IMPORT = pytest.mark.filterwarnings(
    "ignore:Creating .* WeightUpdaterBase is deprecated:DeprecationWarning"
)


@_TORCHRL_IMPORT
def test_short_torchrl_ippo_on_small_pcs_beats_random():
    pytest.importorskip("torchrl")
    from gymnasium import spaces

    from training.torchrl_ippo import IPPOConfig, train

    config = dict(num_threads=1)
    cfg = IPPOConfig(num_envs=2, num_steps=48, updates=6, env_config=config)
    out = train("pcs_v1", cfg, seed=3, log=lambda line: None)
    assert [h["env_steps"] for h in out["history"]] == [96 * k for k in range(1, 7)]
    ippo = score("pcs_v1", config, out["policy"])
    rand = score("pcs_v1", config, policies.RandomPolicy(spaces.Discrete(11), 0))
    assert ippo > rand + 10


@_TORCHRL_IMPORT
@pytest.mark.slow
def test_quick_runs_of_both_trainers_merge_by_seed(tmp_path, capsys):
    """Seeds trained in separate runs (and by one trainer only) come together in one row."""
    pytest.importorskip("torchrl")
    from training.__main__ import main

    common = ["--quick", "--tasks", "pcs_v1", "--sizes", "small", "--out", str(tmp_path)]
    main([*common, "--seeds", "1"])
    results = main([*common, "--seeds", "1", "--first-seed", "2", "--trainers", "torchrl"])
    (result,) = results
    assert [run["seed"] for run in result["ppo"]["runs"]] == [1]
    assert [run["seed"] for run in result["torchrl_ippo"]["runs"]] == [1, 2]
    row = (tmp_path / "results.txt").read_text().splitlines()[-1]
    assert "(2 seeds)" in row and row.startswith("| pcs_v1 | small |")
    assert (tmp_path / "pcs_v1_small.png").stat().st_size > 0


def test_admission_task_runs_and_writes_its_table_json_and_curves(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    import json

    from training import admission

    out = tmp_path / "admission.json"
    admission.main(["--quick", "--json", str(out)])
    result = json.loads(out.read_text())
    rules = sorted(result["rules"])
    assert len(rules) == 2 and rules[0] == "always admit" and rules[1].startswith("guard")
    assert len(result["ppo"]) == 1 and len(result["ppo"][0]["history"]) == 2
    assert (tmp_path / "admission.png").stat().st_size > 0
    assert "PPO greedy" in capsys.readouterr().out
