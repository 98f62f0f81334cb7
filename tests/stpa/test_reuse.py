"""Reusing a cached decision (``seer_env.stpa.reuse``): allowed here, re-validated, replaced.

A decision measured under contention is provisional: never reused on a quiet machine,
never replacing an entry measured on one.
"""

import json

import pytest
from stpa_machine import LOADED, PCS, PHOLD, QUIET, simulate_load

from seer_env import stpa
from seer_env.envs import pcs_v0
from seer_env.stpa import cost_model, revalidate, rules
from seer_env.stpa import load as stpa_load
from seer_env.stpa import reuse as stpa_reuse
from seer_env.stpa.preflight import Candidate

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def fake_duel(held, calls):
    def duel(model, config, cached, challengers, **kwargs):
        calls.append((cached, list(challengers)))
        ratio, faster = (1.0, 0.0) if held else (0.6, 1.0)
        strongest = challengers[0]
        return revalidate.Duel(cached, strongest, held, ratio, faster, 6, 0.01, False, {})

    return duel


def test_cached_entry_without_a_runner_up_is_a_plain_hit(monkeypatch, machine, preflights):
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([], {}, 1, "x"))
    stpa.choose("phold", PHOLD)  # serial only: nothing else measured
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    again = stpa.choose("phold", PHOLD)
    assert again.report["cache"]["outcome"] == "hit" and len(preflights) == 1
    assert "no runner-up" in again.report["cache"]["status"]


def test_cached_choice_above_usable_threads_is_ignored(machine, preflights, isolated):
    key = None
    stpa.choose("phold", PHOLD)
    data = json.loads(isolated.read_text())
    (key,) = data["entries"]
    data["entries"][key]["report"]["choice"] = {"executor": "parallel", "num_threads": 64}
    isolated.write_text(json.dumps(data))
    decision = stpa.choose("phold", PHOLD)
    assert len(preflights) == 2 and decision.num_threads <= 4


# -- re-validation of cached entries ---------------------------------------------------------------


def test_cache_hit_is_revalidated_once_per_process(monkeypatch, machine, preflights):
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([2], {}, 2, "x"))
    first = stpa.choose("phold", PHOLD)  # serial vs parallel x2: one is the runner-up
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())  # as in a new process
    calls = []
    monkeypatch.setattr(revalidate, "duel", fake_duel(True, calls))
    second = stpa.choose("phold", PHOLD)
    third = stpa.choose("phold", PHOLD)
    assert len(preflights) == 1
    assert len(calls) == 1  # the third env reuses the second's check
    assert second.report["cache"]["outcome"] == "revalidated"
    assert second.report["cache"]["revalidation"]["held"] is True
    assert third.report["cache"]["outcome"] == "hit"
    cached, rivals = calls[0]
    assert (cached.executor, cached.num_threads) == (first.executor, first.num_threads)
    assert rivals and cached not in rivals


def test_cache_entry_that_loses_its_revalidation_is_replaced(
    monkeypatch, machine, preflights, isolated
):
    # An entry "parallel x1" measured in a burst, parallel x2 the runner-up.
    with monkeypatch.context() as m:
        m.setattr(rules, "_pick", lambda allowed, scores: (Candidate(1, "parallel"), "burst"))
        m.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([1, 2], {}, 2, "x"))
        m.setattr(cost_model, "next_size", lambda measured, most: None)  # x2 stays runner-up
        stpa.choose("phold", PHOLD, executor="parallel")  # serial: not a runner-up
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())  # a new process, on a quiet machine
    calls = []
    monkeypatch.setattr(revalidate, "duel", fake_duel(False, calls))
    decision = stpa.choose("phold", PHOLD, executor="parallel")
    assert [(c.label, [r.label for r in rs]) for c, rs in calls] == [
        ("parallel x1", ["parallel x2"])
    ]
    assert decision.report["source"] == "preflight" and len(preflights) == 2
    cache = decision.report["cache"]
    assert cache["outcome"] == "replaced" and cache["revalidation"]["held"] is False
    assert "lost its re-validation" in cache["status"] and cache["status"].endswith("stored")
    (entry,) = json.loads(isolated.read_text())["entries"].values()
    assert entry["report"]["choice"] == decision.report["choice"]
    assert not entry["report"]["reason"].startswith("burst")


# -- load: a decision made under contention must not stick -----------------------------------------


def test_decision_under_cpu_contention_is_only_provisional(monkeypatch, machine, preflights):
    # Pressure, but no CPU busy elsewhere per the load average: no cap, yet contended.
    simulate_load(monkeypatch, stpa_load.SimulatedLoad(0.9, load_average=1.0))
    first = stpa.choose("phold", PHOLD)
    assert "CPU pressure 90%" in first.report["cache"]["status"]
    assert first.report["cache"]["outcome"] == "provisional"
    assert first.report["load"]["contended"] and "features" in first.report
    simulate_load(monkeypatch, QUIET)
    stpa.choose("phold", PHOLD)
    assert len(preflights) == 2


def test_entry_written_under_load_is_not_reused_on_a_quiet_machine(
    monkeypatch, machine, preflights, isolated
):
    simulate_load(monkeypatch, LOADED)
    loaded = pcs_v0.parallel_env(**PCS, executor=None, num_threads="auto")
    loaded.reset(seed=0)
    report = loaded.runtime.stpa
    assert report["cache"]["outcome"] == "provisional"
    assert report["load"]["contended"] and "CPU pressure 42%" in report["load"]["reasons"][0]
    (entry,) = json.loads(isolated.read_text())["entries"].values()
    assert entry["provisional"] is True
    simulate_load(monkeypatch, QUIET)
    quiet = pcs_v0.parallel_env(**PCS, executor=None, num_threads="auto")
    quiet.reset(seed=0)
    assert len(preflights) == 2  # measured again, not reused
    assert quiet.runtime.stpa["source"] == "preflight"
    assert quiet.runtime.stpa["cache"]["outcome"] == "stored"
    assert "provisional entry (measured under load)" in quiet.runtime.stpa["cache"]["status"]
    (entry,) = json.loads(isolated.read_text())["entries"].values()
    assert entry["provisional"] is False  # the quiet decision replaced it


def test_provisional_entry_never_replaces_a_quiet_one(monkeypatch, machine, isolated):
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([1, 2], {}, 2, "x"))
    stpa.choose("phold", PHOLD, executor="parallel")
    quiet = json.loads(isolated.read_text())
    # A new process under load: the quiet entry loses its duel, the fresh
    # preflight is contended, and the quiet entry stays.
    simulate_load(monkeypatch, LOADED)
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    monkeypatch.setattr(revalidate, "duel", fake_duel(False, []))
    decision = stpa.choose("phold", PHOLD, executor="parallel")
    assert decision.report["cache"]["outcome"] == "replaced"
    assert "quiet machine is kept" in decision.report["cache"]["status"]
    assert json.loads(isolated.read_text()) == quiet


def test_contended_decision_never_replaces_the_quiet_entry(monkeypatch, machine, isolated):
    stpa.choose("phold", PHOLD)
    quiet = json.loads(isolated.read_text())
    simulate_load(monkeypatch, stpa_load.SimulatedLoad(0.9, load_average=3.0))
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())  # a new process, under load
    monkeypatch.setattr(revalidate, "duel", fake_duel(False, []))  # the quiet entry loses
    loaded = stpa.choose("phold", PHOLD)
    assert loaded.report["cache"]["outcome"] == "replaced"
    assert json.loads(isolated.read_text()) == quiet  # same key, quiet entry kept


def test_provisional_entry_is_reused_while_the_load_lasts(monkeypatch, machine, preflights):
    simulate_load(monkeypatch, LOADED)
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([1, 2], {}, 2, "x"))
    first = stpa.choose("phold", PHOLD, executor="parallel")
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())  # a new process, same load
    calls = []
    monkeypatch.setattr(revalidate, "duel", fake_duel(True, calls))
    again = stpa.choose("phold", PHOLD, executor="parallel")
    assert len(preflights) == 1 and again.report["source"] == "cache"
    assert again.num_threads == first.num_threads
    assert again.report["cache"]["outcome"] == "revalidated" and len(calls) == 1
