"""A pool chosen on busy CPUs starts on one thread (the serial loop) and probes back.

Beside one busy process per CPU, a pool of two threads chosen by the
preflight stalled its first steps, then ran in rounds on one thread (~1.3x a
serial step's CPU) until a probe confirmed the load: ``num_threads="auto"``
took ~1.2x serial's CPU per step there. Now such a decision says
``start_on_one_thread`` and the env starts as after a confirmed shed; the
adaptive pool's probes restore the threads when the load goes. Outputs never
depend on it (the bytes are checked here too).
"""

import numpy as np
import pytest
from stpa_machine import PCS, simulate_load

import seer_env
from seer_env import stpa
from seer_env.stpa import chooser, cost_model, rules
from seer_env.stpa.decision import Decision
from seer_env.stpa import load as stpa_load

pytestmark = pytest.mark.usefixtures("isolated", "machine")

BUSY = stpa_load.SimulatedLoad(0.6, load_average=4.0)


@pytest.fixture
def two_threads_pay(monkeypatch):
    """The static model predicts x2 pays and no measured loss overrides it (the rules'
    contended branch), whatever the real machine measures."""
    monkeypatch.setattr(rules, "CONTENDED_LOSS", float("inf"))
    plan = cost_model.Plan([1, 2], {1: 1.0, 2: 1e-9}, 2, "x")
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: plan)
    monkeypatch.setattr(cost_model, "next_size", lambda measured, most: None)


def test_a_contended_choice_of_two_threads_starts_on_one(monkeypatch, two_threads_pay):
    simulate_load(monkeypatch, BUSY)
    decision = stpa.choose("pcs", PCS)
    assert (decision.executor, decision.num_threads) == ("parallel", 2)
    why = decision.report["start_on_one_thread"]
    assert why.startswith("chosen while the CPUs were busy (CPU pressure 60%")


def test_a_quiet_choice_starts_on_every_thread(two_threads_pay):
    decision = stpa.choose("pcs", PCS)
    assert "start_on_one_thread" not in decision.report


def test_a_quiet_decision_reused_on_busy_cpus_starts_on_one():
    # A cached decision measured quiet, reused while the CPUs are busy now.
    quiet_report = {"load": {"contended": False, "reasons": []}}
    busy_now = BUSY.now()
    quiet_now = stpa_load.SimulatedLoad().now()
    pool = chooser._starting_on_one_thread(Decision("parallel", 2, dict(quiet_report)), busy_now)
    assert pool.report["start_on_one_thread"].startswith("chosen while the CPUs were busy (CPU")
    kept = chooser._starting_on_one_thread(Decision("parallel", 2, dict(quiet_report)), quiet_now)
    assert "start_on_one_thread" not in kept.report
    for executor, threads in (("serial", 1), ("parallel", 1), ("barrier", 2)):
        one = chooser._starting_on_one_thread(
            Decision(executor, threads, dict(quiet_report)), busy_now
        )
        assert "start_on_one_thread" not in one.report, (executor, threads)


def test_env_starts_on_the_serial_loop_with_the_same_bytes(monkeypatch, two_threads_pay):
    simulate_load(monkeypatch, BUSY)
    # Checked steps (the default's first two) run one handler at a time anyway.
    env = seer_env.make("pcs_v0", **PCS, num_threads="auto", max_cycles=6, check_steps=0)
    serial = seer_env.make("pcs_v0", **PCS, executor="serial", max_cycles=6)
    env.reset(seed=3)
    serial.reset(seed=3)
    sim = env.unwrapped.sim
    assert sim.num_threads == 2
    actions = np.zeros(len(env.possible_agents), dtype=np.int64)
    for _ in range(4):
        got = env.unwrapped.step_arrays(actions)
        want = serial.unwrapped.step_arrays(actions)
        for a, b in zip(got, want):
            assert a.tobytes() == b.tobytes()
        step = sim.last_step
        assert step["threads"] == 1
        assert "serial loop" in step["thread_decision"]
        assert step["thread_decision"].startswith("chosen while the CPUs were busy")
    assert sim.digest() == serial.unwrapped.sim.digest()
    env.close()
    serial.close()


def test_vector_env_starts_on_one_thread(monkeypatch, two_threads_pay):
    simulate_load(monkeypatch, BUSY)
    vec = seer_env.vector.make(
        "pcs_v0", num_instances=2, **PCS, num_threads="auto", check_steps=0
    )
    assert "start_on_one_thread" in vec.stpa_report
    vec.reset(seed=1)
    vec.step(np.zeros(vec.num_envs, dtype=np.int64))
    assert vec.sim.last_step(0)["threads"] == 1
    vec.close()
