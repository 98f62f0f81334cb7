"""A compiled NumbaModel in the vector env and under num_threads="auto" (STPA), byte for byte."""

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from numba_pcs import NumbaPcs  # noqa: E402

from seer_env import SeerParallelEnv, vector  # noqa: E402
from seer_env.model_source import runs_on_threads  # noqa: E402
from seer_env.stpa import cost_model, hardware, rules  # noqa: E402
from seer_env.stpa import load as stpa_load  # noqa: E402
from seer_env.stpa import reuse as stpa_reuse  # noqa: E402

PCS = {"width": 3, "height": 2, "phones_per_cell": 6, "move_interval": 300.0}


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """Own STPA cache and memo, no SEER_NUM_THREADS, a quiet machine with 4 usable threads."""
    monkeypatch.setattr(stpa_load, "DEFAULT", stpa_load.SimulatedLoad())
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    monkeypatch.setenv("SEER_STPA_CACHE", str(tmp_path / "stpa.json"))
    monkeypatch.delenv("SEER_NUM_THREADS", raising=False)
    features = dict(hardware.machine_features())
    features.update(usable_threads=4, physical_cores=4, affinity_cpus=4)
    monkeypatch.setattr(hardware, "machine_features", lambda: dict(features))


def vector_rollout(model, steps=8, **kwargs):
    """Every byte a vector env of 3 instances returns (fixed actions, one autoreset)."""
    envs = vector.make(model, num_envs=3, seed=5, max_cycles=5, **PCS, **kwargs)
    obs, infos = envs.reset()
    out = [obs.tobytes(), repr(infos).encode()]
    rng = np.random.default_rng(1)
    for _ in range(steps):
        actions = rng.integers(0, envs.single_action_space.n, size=envs.num_envs)
        obs, rewards, terms, truncs, infos = envs.step(actions)
        out += [obs.tobytes(), rewards.tobytes(), terms.tobytes(), truncs.tobytes()]
        out.append(repr(infos).encode())
    digests = [envs.sim.digest(i) for i in range(envs.num_instances)]
    envs.close()
    return out, digests


@pytest.mark.parametrize(("executor", "threads"), [("serial", 1), ("parallel", 2), ("parallel", 4)])
def test_numba_pcs_vector_env_is_the_cpp_pcs_vector_env(executor, threads):
    # max_cycles=5 over 8 steps: every instance autoresets once on the way.
    reference, ref_digests = vector_rollout("pcs_v0", executor="serial", num_threads=1)
    found, digests = vector_rollout(NumbaPcs, executor=executor, num_threads=threads)
    assert found == reference
    assert digests == ref_digests


def test_vector_env_refuses_interpreted_numba_model():
    with pytest.raises(ValueError, match="compiled NumbaModels: Python handlers hold the GIL"):
        vector.make(NumbaPcs, num_envs=2, compiled=False, **PCS)


def test_vector_env_passes_numba_model_parameters_through_validation():
    with pytest.raises(ValueError, match="width must be in \\[1, 4096\\], got 0"):
        vector.make(NumbaPcs, num_envs=2, width=0)
    with pytest.raises(ValueError, match="move_interval must be >= call_interval / 1e4"):
        vector.make(NumbaPcs, num_envs=2, move_interval=1e-6)


def env_rollout(model, steps=8, **kwargs):
    """Every byte a ParallelEnv returns over ``steps`` steps (fixed actions)."""
    env = SeerParallelEnv(model, PCS, seed=3, **kwargs)
    obs, infos = env.reset()
    out = [np.stack(list(obs.values())).tobytes(), repr(infos).encode()]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        actions = {a: int(rng.integers(env.action_space(a).n)) for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        out += [np.stack(list(obs.values())).tobytes(), np.array(list(rewards.values())).tobytes()]
        out.append(repr((terms, truncs, infos)).encode())
    out.append(env.state().tobytes())
    return out, env


def test_auto_runs_stpa_for_a_compiled_numba_model():
    # A compiled model runs without the GIL: STPA measures it like a C++ model.
    auto, env = env_rollout(NumbaPcs, num_threads="auto")
    report = env.runtime.stpa
    assert report is not None and report["source"] == "preflight", report
    assert report["cache"]["key"]
    again = SeerParallelEnv(NumbaPcs, PCS, num_threads="auto")
    again.reset(seed=3)
    assert again.runtime.stpa["source"] == "cache"  # same model and config: the same key
    fixed, _ = env_rollout("pcs", executor="serial", num_threads=1)
    assert auto == fixed


@pytest.mark.parametrize("choice", [("serial", 1), ("parallel", 2), ("parallel", 3)])
def test_auto_choice_for_numba_model_is_byte_identical(monkeypatch, choice):
    # Force each choice through the real auto path (its preflight runs too).
    def pick(allowed, medians):
        return next(c for c in allowed if (c.executor, c.num_threads) == choice), "forced"

    monkeypatch.setattr(rules, "_pick", pick)
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([2, 3], {}, 3, "x"))
    auto, env = env_rollout(NumbaPcs, num_threads="auto")
    assert (env.runtime.executor, env.runtime.num_threads) == choice
    fixed, _ = env_rollout("pcs", executor="serial", num_threads=1)
    assert auto == fixed


def test_auto_vector_env_of_numba_model(monkeypatch):
    def pick(allowed, medians):
        return next(c for c in allowed if c.num_threads == 2), "forced"

    monkeypatch.setattr(rules, "_pick", pick)
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([2], {}, 2, "x"))
    envs = vector.make(NumbaPcs, num_envs=3, **PCS, num_threads="auto")
    assert envs.stpa_report["source"] == "preflight"
    assert envs.stpa_report["choice"] == {"executor": "parallel", "num_threads": 2}
    assert envs.sim.num_threads == 2
    envs.close()


def test_auto_stays_serial_for_interpreted_and_python_models():
    env = SeerParallelEnv(NumbaPcs, {**PCS, "compiled": False}, num_threads="auto")
    env.reset(seed=0)
    assert (env.runtime.executor, env.runtime.num_threads, env.runtime.stpa) == ("serial", 1, None)
    assert runs_on_threads(NumbaPcs, {}) is True
    assert runs_on_threads(NumbaPcs, {"compiled": False}) is False
    assert runs_on_threads("pcs", {}) is True
