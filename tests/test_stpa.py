"""STPA (num_threads="auto"): exactness, cache, overrides, affinity, validation, cost model."""

import json
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

import seer_env
from seer_env import stpa, vector
from seer_env.envs import pcs_v0
from seer_env.stpa import cache as stpa_cache
from seer_env.stpa import cost_model, hardware

PHOLD = dict(num_entities=256, population=2, remote=0.5, lookahead=0.2, work=50)
PCS = dict(width=6, height=4, phones_per_cell=8, move_interval=300.0)


_REAL_FEATURES = hardware.machine_features()
_REAL_PRESSURE = hardware.cpu_pressure


def fake_features(usable=4, **extra):
    """This machine's features, with ``usable`` threads (decisions need >= 2 to be made)."""
    f = dict(_REAL_FEATURES)
    f.update(usable_threads=usable, physical_cores=usable, affinity_cpus=usable, **extra)
    return f


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """Every test gets its own cache file, no SEER_NUM_THREADS, and a quiet machine."""
    monkeypatch.setattr(hardware, "cpu_pressure", lambda: 0.0)
    monkeypatch.setenv("SEER_STPA_CACHE", str(tmp_path / "stpa.json"))
    monkeypatch.delenv("SEER_NUM_THREADS", raising=False)
    return tmp_path / "stpa.json"


@pytest.fixture
def machine(monkeypatch):
    """Pretend this machine has 4 usable threads (the preflight still runs for real)."""
    features = fake_features(4)
    monkeypatch.setattr(hardware, "machine_features", lambda: dict(features))
    return features


@pytest.fixture
def preflights(monkeypatch):
    """Count preflights."""
    calls = []
    real = stpa._preflight

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(stpa, "_preflight", counting)
    return calls


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


# -- exactness ----------------------------------------------------------------------------------
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

    monkeypatch.setattr(stpa, "_pick", pick)
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


def test_preflight_does_not_touch_the_env_simulation(machine):
    env = pcs_v0.parallel_env(**PCS, seed=5, executor=None, num_threads="auto")
    env.reset()
    assert env.sim.steps == 0 and env.sim.events_processed == 0


# -- cache --------------------------------------------------------------------------------------
def test_cache_hit_skips_preflight(machine, preflights, isolated):
    first = stpa.choose("phold", PHOLD)
    assert len(preflights) == 1 and first.report["cache"]["status"] == "miss, stored"
    assert isolated.exists()
    second = stpa.choose("phold", PHOLD)
    assert len(preflights) == 1
    assert second.report["source"] == "cache" and second.report["cache"]["status"] == "hit"
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


def test_cached_choice_above_usable_threads_is_ignored(machine, preflights, isolated):
    key = None
    stpa.choose("phold", PHOLD)
    data = json.loads(isolated.read_text())
    (key,) = data["entries"]
    data["entries"][key]["report"]["choice"] = {"executor": "parallel", "num_threads": 64}
    isolated.write_text(json.dumps(data))
    decision = stpa.choose("phold", PHOLD)
    assert len(preflights) == 2 and decision.num_threads <= 4


@pytest.mark.parametrize("garbage", ["{not json", "[]", '{"format": 1, "entries": 7}', "\x00\xff"])
def test_corrupt_cache_is_tolerated_and_rewritten(machine, preflights, isolated, garbage):
    isolated.write_text(garbage)
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["source"] == "preflight"
    assert json.loads(isolated.read_text())["format"] == stpa_cache.FORMAT


def test_unwritable_cache_is_tolerated(monkeypatch, machine, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("SEER_STPA_CACHE", str(blocker / "stpa.json"))  # parent is a file
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["cache"]["status"].startswith("miss, not stored")


def test_decision_under_cpu_contention_is_not_cached(monkeypatch, machine, preflights):
    monkeypatch.setattr(hardware, "cpu_pressure", lambda: 0.9)
    monkeypatch.setattr(stpa, "_load_average", lambda: 1.0)  # pressure, but no CPU busy elsewhere
    first = stpa.choose("phold", PHOLD)
    assert "CPU pressure" in first.report["cache"]["status"]
    stpa.choose("phold", PHOLD)
    assert len(preflights) == 2


def test_contended_machine_caps_the_pool(monkeypatch, machine, preflights):
    monkeypatch.setattr(hardware, "cpu_pressure", lambda: 0.9)
    monkeypatch.setattr(stpa, "_load_average", lambda: 3.0)  # 2 CPUs busy elsewhere
    decision = stpa.choose("phold", PHOLD)
    assert decision.num_threads <= 2
    assert decision.report["features"]["contention_cap"] == 2
    monkeypatch.setattr(stpa, "_load_average", lambda: 9.0)  # only serial vs parallel x1 left
    decision = stpa.choose("phold", PHOLD)
    assert decision.num_threads == 1
    assert decision.report["features"]["contention_cap"] == 1


def test_cpu_pressure_is_a_fraction_or_none():
    value = _REAL_PRESSURE()
    assert value is None or 0.0 <= value <= 1.0


def test_cache_can_be_disabled(monkeypatch, machine, preflights):
    monkeypatch.setenv("SEER_STPA_CACHE", "off")
    stpa.choose("phold", PHOLD)
    stpa.choose("phold", PHOLD)
    assert len(preflights) == 2


def test_default_cache_path_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("SEER_STPA_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert stpa_cache.default_path() == tmp_path / "seer_env" / "stpa.json"


# -- overrides and fixed answers ----------------------------------------------------------------
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


def test_preflight_failure_falls_back_to_one_thread(monkeypatch, machine):
    def boom(self, *a, **k):
        raise RuntimeError("no")

    monkeypatch.setattr(stpa.Preflight, "probe", boom)
    decision = stpa.choose("phold", PHOLD)
    assert (decision.executor, decision.num_threads) == ("serial", 1)
    assert "preflight failed" in decision.report["reason"]


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


# -- validation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["auto", "AUTO", " auto "])
def test_auto_accepted(value):
    assert stpa.parse_num_threads(value) == "auto"
    pcs_v0.parallel_env(**PCS, executor=None, num_threads=value)
    seer_env.make("pcs_v0", **PCS, num_threads=value)


@pytest.mark.parametrize("value", [0, 1025, -1, "fast", 1.5, True, None, "", [2]])
def test_invalid_num_threads_names_it(value):
    with pytest.raises(ValueError, match="num_threads"):
        stpa.parse_num_threads(value)
    with pytest.raises(ValueError, match="num_threads"):
        pcs_v0.parallel_env(**PCS, num_threads=value)


def test_int_num_threads_still_work_and_pick_the_executor():
    env = seer_env.SeerParallelEnv("pcs", dict(width=4, height=4), num_threads=2)
    env.reset(seed=0)
    assert (env.runtime.executor, env.runtime.num_threads) == ("parallel", 2)
    env = seer_env.SeerParallelEnv("pcs", dict(width=4, height=4), num_threads=1)
    assert env.runtime.executor == "serial"


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


# -- the static model and hardware ----------------------------------------------------------------
def big_trace(seconds=2e-3, events=50_000, rounds=10, entities=65_536):
    return cost_model.Trace(seconds, events, events / 4, rounds, entities, 1024, 0.1)


def test_ladder():
    assert cost_model.ladder(1) == [1]
    assert cost_model.ladder(6) == [1, 2, 4, 6]
    assert cost_model.ladder(64) == [1, 2, 4, 8, 16, 32, 64]


@pytest.mark.parametrize("cores", [64, 128, 256])
def test_plan_keeps_preflight_bounded_on_many_cores(cores):
    plan = cost_model.plan(big_trace(), cores, cores)
    assert plan.best in plan.measure
    assert 1 <= len(plan.measure) <= cost_model.MAX_PARALLEL_CANDIDATES
    assert all(p <= cores for p in plan.measure)


def test_plan_skips_parallel_for_tiny_steps():
    tiny = cost_model.Trace(3e-6, 30, 5, 10, 64, 64, 0.1)
    assert cost_model.plan(tiny, 64, 64).measure == []
    # ... unless serial is not an option.
    assert cost_model.plan(tiny, 64, 64, serial_allowed=False).measure


def test_plan_prefers_more_threads_for_more_work():
    small = cost_model.plan(big_trace(seconds=50e-6, events=500, entities=512), 64, 64).best
    large = cost_model.plan(big_trace(seconds=50e-3), 64, 64).best
    assert small < large


def test_model_counts_smt_siblings_less():
    trace = big_trace()
    assert cost_model.predict_seconds(trace, 16, 8) > cost_model.predict_seconds(trace, 16, 16)


def test_next_size_hill_climbs():
    assert cost_model.next_size({8: 1.0, 16: 0.5}, 64) == 32
    assert cost_model.next_size({8: 0.5, 16: 1.0}, 64) == 4
    assert cost_model.next_size({4: 1.0, 8: 0.5, 16: 1.0}, 64) is None
    assert cost_model.next_size({32: 1.0, 64: 0.5}, 64) is None


def test_usable_threads_respects_affinity_and_quota(monkeypatch, tmp_path):
    monkeypatch.setattr(hardware, "allowed_cpus", lambda: [0, 1, 2, 3])
    monkeypatch.setattr(hardware, "cgroup_cpu_quota", lambda: None)
    assert hardware.usable_threads() == 4
    monkeypatch.setattr(hardware, "cgroup_cpu_quota", lambda: 2.5)
    assert hardware.usable_threads() == 2
    monkeypatch.setattr(hardware, "cgroup_cpu_quota", lambda: 0.5)
    assert hardware.usable_threads() == 1


def test_cgroup_v2_quota_is_read(monkeypatch, tmp_path):
    (tmp_path / "job").mkdir()
    (tmp_path / "cpu.max").write_text("max 100000\n")
    (tmp_path / "job" / "cpu.max").write_text("150000 100000\n")
    monkeypatch.setattr(hardware, "_CGROUP_ROOT", tmp_path)
    monkeypatch.setattr(hardware, "_cgroup_paths", lambda: [("", "/job")])
    assert hardware.cgroup_cpu_quota() == 1.5


def test_machine_features_are_sane():
    f = hardware.machine_features()
    assert 1 <= f["usable_threads"] <= f["logical_cpus"]
    assert 1 <= f["physical_cores"] <= f["usable_threads"]
    assert set(hardware.fingerprint(f)) <= set(f)


# -- vector env: the batch is what runs ------------------------------------------------------
def test_batch_preflight_times_the_whole_batch(machine):
    one = stpa.choose("pcs", PCS)
    batch = stpa.choose("pcs", PCS, num_envs=12)
    assert batch.report["features"]["num_envs"] == 12
    assert one.report["features"]["num_envs"] == 1
    # The batch's serial probe handles about 12 times the events of one instance.
    ratio = batch.report["trace"]["events_per_step"] / one.report["trace"]["events_per_step"]
    assert 6 < ratio < 24


def test_cache_key_includes_num_envs(machine, preflights):
    stpa.choose("pcs", PCS)
    stpa.choose("pcs", PCS, num_envs=8)
    stpa.choose("pcs", PCS, num_envs=8)
    assert len(preflights) == 2


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
