"""The training examples run end to end with tiny settings."""

import argparse
import importlib.util
import math
import re
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ppo_vector_pcs_learns_something():
    pytest.importorskip("torch")
    args = ["--num-envs", "3", "--width", "4", "--height", "4", "--max-cycles", "20"]
    args += ["--num-steps", "32", "--updates", "8", "--epochs", "2", "--threads", "1"]
    out = load("ppo_vector_pcs").main(args)
    history = out["history"]
    assert out["rows"] == 3 * 16
    assert [h["update"] for h in history] == list(range(1, 9))
    assert history[-1]["env_steps"] == 8 * 32 * 3
    assert all(math.isfinite(h["v_loss"]) and math.isfinite(h["pg_loss"]) for h in history)
    # random guard counts block many new calls; the shared policy learns to use fewer
    assert history[-1]["mean_reward"] > history[0]["mean_reward"]


def test_ppo_vector_pcs_parallel_executor():
    pytest.importorskip("torch")
    args = ["--num-envs", "2", "--width", "4", "--height", "4", "--max-cycles", "10"]
    args += ["--num-steps", "16", "--updates", "2", "--epochs", "1", "--threads", "2"]
    out = load("ppo_vector_pcs").main(args)
    assert len(out["history"]) == 2


# TorchRL 0.14 warns about its own classes when torchrl.collectors is imported.
@pytest.mark.filterwarnings("ignore:Creating .* inherits from WeightUpdaterBase:DeprecationWarning")
def test_torchrl_example_collects_a_rollout():
    pytest.importorskip("torchrl")
    out = load("torchrl_pcs").main(["--width", "4", "--height", "4", "--steps", "20"])
    assert tuple(out["rollout"].batch_size) == (20,)
    assert len(out["batch_rewards"]) == 2


def test_torchrl_admission_example_trains_on_the_masked_rows(capsys):
    pytest.importorskip("torchrl")
    args = ["--num-envs", "2", "--width", "4", "--height", "4", "--max-cycles", "2"]
    out = load("torchrl_admission").main([*args, "--steps", "30", "--iterations", "2"])
    history = out["history"]
    assert [h["iteration"] for h in history] == [1, 2]
    assert all(0 < h["in_loss"] <= h["decisions"] for h in history)
    assert all(math.isfinite(h["pg_loss"]) and math.isfinite(h["v_loss"]) for h in history)
    assert "reward/decision" in capsys.readouterr().out


def test_torchrl_admission_credits_each_reward_to_the_cells_previous_decision():
    """The example's vectorised GAE equals each cell's chain of decisions built one by one."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchrl")
    example = load("torchrl_admission")
    config = {"num_envs": 2, "width": 4, "height": 4, "max_cycles": 1, "seed": 3}
    config.update(executor="serial", threads=1, hidden=8)
    env, actor, _, value_net = example.build(argparse.Namespace(**config))
    td = env.rollout(70, actor, break_when_any_done=False)
    gamma, lam = 0.99, 0.9
    adv, values, valid = example.advantages(td, value_net, gamma, lam)
    mask = td["agents", "mask"]
    when = td["agents", "decision_time"][..., 0]
    reward = td["next", "agents", "reward"][..., 0].double()
    ended = td["next", "done"][..., 0]
    last = td["next"][:, -1]
    with torch.no_grad():
        tail = value_net(last["agents", "observation"])[..., 0].double()
    m, steps, n = mask.shape
    checked = 0
    for i in range(m):
        for j in range(n):
            # Each decision: (step, value, time); its reward: what the cell is paid
            # up to its next decision or the episode's end; then its successor.
            chain, a_next, v_next, t_next, owed, known = [], 0.0, 0.0, None, 0.0, False
            if last["agents", "mask"][i, j] and not last["done"][i]:
                v_next, t_next, known = (
                    float(tail[i, j]),
                    float(last["agents", "decision_time"][i, j, 0]),
                    True,
                )
            for t in reversed(range(steps)):
                if ended[i, t]:
                    a_next, v_next, t_next, owed, known = 0.0, 0.0, None, 0.0, True
                owed += float(reward[i, t, j])
                if mask[i, t, j]:
                    g = 0.0 if t_next is None else gamma ** (t_next - float(when[i, t, j]))
                    delta = owed + g * v_next - float(values[i, t, j])
                    a = delta + g * lam * a_next
                    chain.append((t, a, known))
                    a_next, v_next, t_next, owed, known = (
                        a,
                        float(values[i, t, j]),
                        float(when[i, t, j]),
                        0.0,
                        True,
                    )
            for t, a, known in chain:
                assert bool(valid[i, t, j]) == known
                assert adv[i, t, j].item() == pytest.approx(a, rel=1e-5, abs=1e-5)
                checked += 1
    assert checked == int(mask.sum()) and int(ended.sum()) >= 2
    assert not valid[~mask].any()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_rllib_example_trains_and_prints_returns(capsys):
    pytest.importorskip("ray.rllib")
    returns = load("rllib_ppo_pcs").main(
        # 512 agent steps: 32 env steps of 16 cells, so each runner ends an 8-cycle episode
        ["--iterations", "2", "--batch", "512", "--max-cycles", "8", "--env-runners", "2"]
    )
    assert len(returns) == 2 and all(math.isfinite(r) for r in returns)
    out = capsys.readouterr().out
    assert "episode_return_mean" in out and "agent steps/s" in out
    # 1 CPU reserved per runner: a 1-thread budget, so STPA runs each env serially
    assert out.count("1 CPU(s) reserved, budget 1 thread(s), env pool serial x1") == 2


def test_rllib_example_trains_agents_that_act_when_their_events_ask(capsys):
    pytest.importorskip("ray.rllib")
    from gymnasium.envs.registration import registry

    args = ["--env", "pcs_admission_v0", "--env-runners", "0", "--iterations", "2"]
    # Sampling in this process, RLlib registers its env wrapper in Gymnasium's
    # registry here; a later test that does the same would warn about it.
    before = set(registry)
    try:
        returns = load("rllib_ppo_pcs").main([*args, "--batch", "256", "--max-cycles", "4"])
    finally:
        for key in set(registry) - before:
            del registry[key]
    assert len(returns) == 2 and all(math.isfinite(r) for r in returns)
    out = capsys.readouterr().out
    # An env step is a return to the policy: the cells that must act then,
    # not all 16 of the 4x4 grid as in a lockstep env.
    steps = [tuple(map(int, m)) for m in re.findall(r"agent steps (\d+) \((\d+) env steps\)", out)]
    assert len(steps) == 2
    assert all(agent_steps < 16 * env_steps for agent_steps, env_steps in steps)


def test_rllib_example_batch_arguments(capsys):
    parse = load("rllib_ppo_pcs").parse_args
    args = parse([])  # the defaults: agent steps, minibatch derived from the batch
    assert args.count_steps_by == "agent_steps" and args.minibatch == args.batch // 4
    assert parse(["--batch", "50"]).minibatch == 12
    assert parse(["--batch", "2", "--minibatch", "2"]).minibatch == 2
    for bad in (
        ["--batch", "50", "--minibatch", "800"],
        ["--batch", "0"],
        ["--torch-threads", "-1"],
    ):
        with pytest.raises(SystemExit):
            parse(bad)
    err = capsys.readouterr().err
    assert "--minibatch must be in [1, --batch=50] (agent_steps), got 800" in err
    assert "--batch must be >= 1, got 0" in err
    assert "--torch-threads must be >= 0, got -1" in err


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_rllib_sampling_throughput_example(capsys):
    pytest.importorskip("ray.rllib")
    from seer_env.stpa import hardware

    # 0 runners only (the driver samples): runner pools are checked by test_rllib_scaleout.py
    args = ["--runners", "0", "--agent-steps", "256", "--repeats", "2", "--max-cycles", "8"]
    (result,) = load("rllib_sampling_throughput").main(args)
    assert result["runners"] == 0 and len(result["agent_steps"]) == 2
    assert min(result["agent_steps"]) >= 256 and result["agent_steps_per_s"] > 0
    # 16 cells live in every step of pcs_v0: 16 agent steps per env step
    assert math.isclose(result["agent_steps_per_s"], 16 * result["env_steps_per_s"])
    (driver,) = result["pools"]
    assert driver["worker_index"] == 0 and driver["ray_assigned_cpus"] is None
    (env,) = driver["envs"]
    assert env["stpa_source"] is not None  # the sampling driver's env: "auto"
    assert 1 <= env["num_threads"] <= hardware.usable_threads()
    assert "| env runners |" in capsys.readouterr().out


def test_quickstart_example_runs_an_episode(capsys):
    stats = load("quickstart").main(["--width", "8", "--height", "8", "--max-cycles", "5"])
    assert stats["call_attempts"] > 0
    assert "RuntimeInfo" in capsys.readouterr().out


def test_pcs_benchmark_example_runs():
    load("pcs_benchmark").main(["--grid", "8", "--steps", "3", "--warmup", "1"])


def test_numba_pcs_speed_example_runs(capsys):
    pytest.importorskip("numba")
    args = ["--size", "4", "--steps", "2", "--interpreted-steps", "1"]
    out = load("numba_pcs_speed").main(args)
    assert all(out[k] > 0 for k in ("numba serial", "C++ serial", "interpreted serial"))
    assert "parallel-2 speed-up" in capsys.readouterr().out


def test_planning_example_plans_each_decision_with_forks(capsys):
    out = load("planning_pcs").main(["--steps", "24", "--horizon", "4"])
    planned = out["planned"]
    assert len(planned["chosen"]) == 2 and set(planned["chosen"]) <= {0, 1, 2, 3, 4}
    assert all(s > 0 for s in planned["plan_seconds"]) and out["fixed"]["chosen"] == []
    assert "fork + rollout" in capsys.readouterr().out


def test_every_example_has_a_test():
    tested = {
        "planning_pcs",
        "quickstart",
        "pcs_benchmark",
        "ppo_vector_pcs",
        "torchrl_pcs",
        "torchrl_admission",
        "rllib_ppo_pcs",
        "rllib_sampling_throughput",
        "numba_pcs_speed",
        "numba_pcs",  # the model numba_pcs_speed runs; tests/models/test_numba_model.py
    }
    scripts = {p.stem for p in EXAMPLES.glob("*.py")}
    assert scripts == tested, f"examples without a test: {scripts - tested}"
    # examples/custom_model_cpp is built and tested by tests/models/test_cpp_plugin_sdk.py
    assert (EXAMPLES / "custom_model_cpp" / "pyproject.toml").exists()


@pytest.mark.parametrize("env", ["pcs_v0", "pcs_v1"])
def test_rllib_example_passes_the_grid_size_to_every_pcs_version(env):
    pytest.importorskip("ray.rllib")
    example = load("rllib_ppo_pcs")
    args = example.parse_args(["--env", env, "--width", "6", "--height", "5"])
    config = example.build_config(args)
    assert config.env_config["width"] == 6 and config.env_config["height"] == 5
