"""The preflight driver (``seer_env.stpa.measure``): probe, prune, measure, score, report."""

import json

import pytest
from stpa_machine import PCS, PHOLD, simulate_load

from seer_env import stpa
from seer_env.stpa import cache as stpa_cache
from seer_env.stpa import cost_model, measure, rules
from seer_env.stpa import load as stpa_load
from seer_env.stpa import reuse as stpa_reuse
from seer_env.stpa.preflight import Preflight

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def test_quiet_machine_scores_by_the_upper_quartile(machine, preflights):
    decision = stpa.choose("phold", PHOLD)
    assert not decision.report["load"]["contended"]
    assert "upper-quartile step" in decision.report["reason"]


def test_contended_machine_measures_every_pool_size(monkeypatch, machine, preflights):
    # PSI 90% with every CPU busy elsewhere: once this capped the pool at one
    # thread; now the preflight measures the sizes, scores each by its fastest
    # step, and takes the static model's predicted optimum when it pays (the
    # adaptive pool handles the load at run time).
    simulate_load(monkeypatch, stpa_load.SimulatedLoad(0.9, load_average=9.0))
    # The real measurement on a busy machine may find x2 clearly slower, a loss no
    # model overrides (tests/stpa/test_rules.py): not what this checks.
    monkeypatch.setattr(rules, "CONTENDED_LOSS", float("inf"))
    plan = cost_model.Plan([1, 2], {1: 1.0, 2: 1e-9}, 2, "x")  # x2 predicted to pay
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: plan)
    monkeypatch.setattr(cost_model, "next_size", lambda measured, most: None)
    decision = stpa.choose("phold", PHOLD)
    report = decision.report
    assert "contention_cap" not in report["features"]
    assert report["features"]["usable_threads"] == 4
    assert report["load"]["contended"] and report["cache"]["outcome"] == "provisional"
    assert "fastest step (contended)" in report["reason"]
    measured = {(c["executor"], c["num_threads"]) for c in report["candidates"]}
    assert {("parallel", 2), ("serial", 1)} <= measured
    assert (decision.executor, decision.num_threads) == ("parallel", 2)
    assert "static model's optimum" in report["reason"]
    # No pool predicted to pay (a tiny env): the measurement decides, fewest
    # threads within TIE (more threads would never pay, load or not).
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    slow = cost_model.Plan([1, 2], {1: 1e9, 2: 1e9}, 2, "x")
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: slow)
    decision = stpa.choose("phold", PHOLD, cache=stpa_cache.DecisionCache(None))
    assert "static model's optimum" not in decision.report["reason"]
    assert "with more threads" not in decision.report["reason"]
    scores = {(c["executor"], c["num_threads"]): c["min_s"] for c in decision.report["candidates"]}
    fastest = min(scores.values())
    chosen = scores[(decision.executor, decision.num_threads)]
    assert chosen <= fastest * (1 + rules.TIE)
    fewer = [s for (e, n), s in scores.items() if n < decision.num_threads]
    assert all(s > fastest * (1 + rules.TIE) for s in fewer)


def test_simulated_run_fraction_alone_means_contended(monkeypatch, machine, preflights):
    simulate_load(monkeypatch, stpa_load.SimulatedLoad(0.0, run_fraction=0.5))
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["cache"]["outcome"] == "provisional"
    assert "on the CPU 50%" in decision.report["load"]["reasons"][0]


def test_preflight_measures_the_load_over_its_window(machine):
    decision = stpa.choose("phold", PHOLD, load_signal=stpa_load.LoadSignal())
    load = decision.report["load"]
    assert set(load) >= {"contended", "reasons", "cpu_pressure", "run_fraction", "window_s"}
    assert load["window_s"] > 0
    assert load["run_fraction"] is None or 0.0 < load["run_fraction"] <= 1.05
    assert load["contended"] == bool(load["reasons"])
    json.dumps(decision.report)


def test_batch_preflight_times_the_whole_batch(machine):
    one = stpa.choose("pcs", PCS)
    batch = stpa.choose("pcs", PCS, num_envs=12)
    assert batch.report["features"]["num_envs"] == 12
    assert one.report["features"]["num_envs"] == 1
    # The batch's serial probe handles about 12 times the events of one instance.
    ratio = batch.report["trace"]["events_per_step"] / one.report["trace"]["events_per_step"]
    assert 6 < ratio < 24


def test_a_size_added_in_the_last_round_is_not_chosen_unmeasured(monkeypatch, machine):
    # An extension added when the round limit is reached has no samples: it is
    # reported as pruned, never chosen or looked up (was: KeyError on a busy machine).
    monkeypatch.setattr(measure, "MAX_ROUNDS", 1)
    monkeypatch.setattr(measure, "MIN_ROUNDS", 1)
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([2], {}, 2, "x"))
    monkeypatch.setattr(cost_model, "next_size", lambda measured, most: 4)
    decision = stpa.choose("phold", PHOLD, executor="parallel")
    report = decision.report
    assert report["source"] == "preflight"
    assert 4 not in [c["num_threads"] for c in report["candidates"]]
    assert 2 in [c["num_threads"] for c in report["candidates"]]
    assert decision.num_threads in (1, 2)


def test_preflight_failure_falls_back_to_one_thread(monkeypatch, machine):
    def boom(self, *a, **k):
        raise RuntimeError("no")

    monkeypatch.setattr(Preflight, "probe", boom)
    decision = stpa.choose("phold", PHOLD)
    assert (decision.executor, decision.num_threads) == ("serial", 1)
    assert "preflight failed" in decision.report["reason"]
