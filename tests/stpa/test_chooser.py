"""``choose()`` (``seer_env.stpa.chooser``): its answers in order, and the envs' choice.

The order: ``SEER_NUM_THREADS``, a fixed answer, a cached decision, a preflight.
Whatever is chosen, an env returns the bytes of a serial one.
"""

import json
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest
from stpa_machine import PCS, PHOLD, fake_features

import seer_env
from seer_env import stpa, vector
from seer_env.envs import pcs_v0
from seer_env.stpa import cost_model, hardware, rules

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def env_rollout(steps=12, **kwargs):
    """Every byte an env returns over ``steps`` steps (fixed actions)."""
    env = pcs_v0.parallel_env(**PCS, seed=3, **kwargs)
    out = []
    obs, infos = env.reset()
    out += [np.stack(list(obs.values())).tobytes(), repr(infos).encode()]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        actions = {a: int(rng.integers(env.action_space(a).n)) for a in env.agents}
        obs, rew, term, trunc, infos = env.step(actions)
        out += [
            np.stack(list(obs.values())).tobytes(),
            np.array(list(rew.values())).tobytes(),
            repr((term, trunc, infos)).encode(),
        ]
    out.append(env.state().tobytes())
    return out, env


# -- exactness -------------------------------------------------------------------------------------


def test_phold_simulation_with_auto_choice_is_byte_identical_to_serial(machine):
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["source"] == "preflight"
    assert 1 <= decision.num_threads <= 4
    sims = [
        seer_env.Simulation("phold", PHOLD, executor=decision.executor, num_threads=n)
        for n in (decision.num_threads,)
    ] + [seer_env.Simulation("phold", PHOLD)]
    for sim in sims:
        sim.reset(11)
    for t in range(1, 15):
        for sim in sims:
            sim.run_until(float(t))
        assert sims[0].digest() == sims[1].digest()


@pytest.mark.parametrize("choice", [("serial", 1), ("parallel", 1), ("parallel", 3)])
def test_env_outputs_identical_with_and_without_auto(monkeypatch, machine, choice):
    # Force each possible choice through the real auto path (its preflight runs too).
    def pick(allowed, medians):
        return next(c for c in allowed if (c.executor, c.num_threads) == choice), "forced"

    monkeypatch.setattr(rules, "_pick", pick)
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([1, 3], {}, 3, "x"))
    auto, env = env_rollout(executor=None, num_threads="auto")
    assert (env.runtime.executor, env.runtime.num_threads) == choice
    fixed, _ = env_rollout(executor="serial", num_threads=1)
    assert auto == fixed


def test_env_default_is_auto_and_reports(machine):
    env = seer_env.SeerParallelEnv("pcs", dict(width=4, height=4))
    assert env.runtime.stpa is None  # chosen at the first reset
    env.reset(seed=1)
    report = env.runtime.stpa
    assert report["source"] == "preflight"
    assert report["choice"] == {
        "executor": env.runtime.executor,
        "num_threads": env.runtime.num_threads,
    }
    assert report["reason"]
    labels = {(c["executor"], c["num_threads"]) for c in report["candidates"]}
    assert ("serial", 1) in labels
    for key in ("events_per_step", "rounds_per_step", "cross_fraction", "seconds_per_event"):
        assert key in report["trace"]
    for key in ("num_entities", "num_agents", "lookahead_over_dt", "usable_threads", "caches"):
        assert key in report["features"]
    json.dumps(report)  # JSON-ready


def test_vector_env_auto_decides_for_its_batch_and_stays_identical(machine):
    venv = vector.make("pcs_v0", num_envs=6, **PCS, num_threads="auto")
    serial = vector.make("pcs_v0", num_envs=6, **PCS, executor="serial")
    assert venv.stpa_report is not None and venv.stpa_report["features"]["num_envs"] == 6
    assert serial.stpa_report["source"] == "static"  # executor="serial": nothing to choose
    choice = venv.stpa_report["choice"]
    assert venv.sim.num_threads == choice["num_threads"]
    venv.reset(seed=3)
    serial.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(10):
        actions = rng.integers(0, 11, size=venv.num_envs)
        assert venv.step(actions)[0].tobytes() == serial.step(actions)[0].tobytes()


def test_pickling_keeps_the_decision(machine, preflights):
    env = pcs_v0.parallel_env(**PCS, executor=None, num_threads="auto", seed=2)
    fresh = pickle.loads(pickle.dumps(env))  # not reset yet: will choose at its reset
    env.reset()
    clone = pickle.loads(pickle.dumps(env))
    assert len(preflights) == 1
    assert (clone.runtime.executor, clone.runtime.num_threads) == (
        env.runtime.executor,
        env.runtime.num_threads,
    )
    fresh.reset()
    assert fresh.runtime.stpa["source"] == "cache"


# -- overrides and fixed answers -------------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [("3", ("parallel", 3)), ("1", ("serial", 1))])
def test_env_var_overrides(monkeypatch, preflights, value, expected):
    monkeypatch.setenv("SEER_NUM_THREADS", value)
    env = pcs_v0.parallel_env(**PCS, executor=None, num_threads="auto")
    env.reset(seed=0)
    assert (env.runtime.executor, env.runtime.num_threads) == expected
    assert env.runtime.stpa["source"] == "SEER_NUM_THREADS"
    assert not preflights


def test_env_var_auto_means_auto_and_bad_value_names_it(monkeypatch, machine, preflights):
    monkeypatch.setenv("SEER_NUM_THREADS", "auto")
    assert stpa.choose("phold", PHOLD).report["source"] == "preflight"
    monkeypatch.setenv("SEER_NUM_THREADS", "lots")
    with pytest.raises(ValueError, match="SEER_NUM_THREADS"):
        stpa.choose("phold", PHOLD)


def test_explicit_int_wins_over_env_var(monkeypatch):
    monkeypatch.setenv("SEER_NUM_THREADS", "3")
    env = pcs_v0.parallel_env(**PCS, executor="parallel", num_threads=2)
    env.reset(seed=0)
    assert env.runtime.num_threads == 2 and env.runtime.stpa is None


def test_fixed_answers_without_preflight(machine, preflights):
    assert stpa.choose("phold", PHOLD, executor="serial").num_threads == 1
    checked = stpa.choose("phold", PHOLD, check=True)
    assert (checked.executor, checked.num_threads) == ("serial", 1)
    assert not preflights


def test_named_executor_restricts_the_choice(machine):
    decision = stpa.choose("phold", PHOLD, executor="parallel")
    assert decision.executor == "parallel"


def test_one_usable_cpu_means_serial(monkeypatch, preflights):
    monkeypatch.setattr(hardware, "machine_features", lambda: fake_features(1))
    decision = stpa.choose("phold", PHOLD)
    assert (decision.executor, decision.num_threads) == ("serial", 1)
    assert not preflights


def test_affinity_is_respected_in_a_fresh_process(tmp_path):
    code = (
        "import os\n"
        "if not TASKSET: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "from seer_env.envs import pcs_v0\n"
        "env = pcs_v0.parallel_env(width=4, height=4, executor=None, num_threads='auto')\n"
        "env.reset(seed=0)\n"
        "print(env.runtime.executor, env.runtime.num_threads)\n"
    )
    taskset = shutil.which("taskset")
    cmd = [sys.executable, "-c", f"TASKSET = {bool(taskset)}\n" + code]
    if taskset:
        cmd = [taskset, "-c", str(min(os.sched_getaffinity(0))), *cmd]
    env = dict(os.environ, SEER_STPA_CACHE=str(tmp_path / "c.json"))
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["serial", "1"]


# -- a cached decision: its key --------------------------------------------------------------------


def test_cache_hit_skips_preflight(machine, preflights, isolated):
    first = stpa.choose("phold", PHOLD)
    assert len(preflights) == 1 and first.report["cache"]["status"] == "miss, stored"
    assert first.report["cache"]["outcome"] == "stored"
    assert first.report["cache"]["path"] == str(isolated)  # says where it wrote
    assert isolated.exists()
    second = stpa.choose("phold", PHOLD)
    assert len(preflights) == 1
    assert second.report["source"] == "cache" and second.report["cache"]["outcome"] == "hit"
    assert "earlier in this process" in second.report["cache"]["status"]  # no second duel
    assert (second.executor, second.num_threads) == (first.executor, first.num_threads)
    # Another config, or another machine, is a miss.
    stpa.choose("phold", dict(PHOLD, work=51))
    assert len(preflights) == 2


def test_cache_hit_in_env_skips_preflight(machine, preflights):
    a = pcs_v0.parallel_env(**PCS, executor=None, num_threads="auto")
    a.reset(seed=0)
    b = pcs_v0.parallel_env(**PCS, executor=None, num_threads="auto")
    b.reset(seed=0)
    assert len(preflights) == 1
    assert b.runtime.stpa["source"] == "cache"
    assert b.runtime.num_threads == a.runtime.num_threads


def test_cache_key_includes_usable_threads(monkeypatch, preflights):
    monkeypatch.setattr(hardware, "machine_features", lambda: fake_features(4))
    stpa.choose("phold", PHOLD)
    monkeypatch.setattr(hardware, "machine_features", lambda: fake_features(2))
    stpa.choose("phold", PHOLD)
    assert len(preflights) == 2


def test_cache_key_includes_num_envs(machine, preflights):
    stpa.choose("pcs", PCS)
    stpa.choose("pcs", PCS, num_envs=8)
    stpa.choose("pcs", PCS, num_envs=8)
    assert len(preflights) == 2


def test_cache_can_be_disabled(monkeypatch, machine, preflights):
    monkeypatch.setenv("SEER_STPA_CACHE", "off")
    stpa.choose("phold", PHOLD)
    stpa.choose("phold", PHOLD)
    assert len(preflights) == 2
