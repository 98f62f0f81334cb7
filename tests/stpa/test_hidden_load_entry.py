"""A cached decision measured under a load the signals missed does not pin the slower pool.

The entry of the tracker issue: on a quiet machine ``num_threads="auto"`` for
PCS 64x64 ran 5.24 ms a step (parallel x1) against 3.74 ms for parallel x2
and 5.22 ms serial. Its cache entry, not provisional (the load signals read
quiet at that instant), chose parallel x1 while the machine was busy (x2 took
12.9 ms then), and the re-validation dueled only against the entry's
runner-up (serial), so two threads were never tried again.

The machines are simulated: every preflight and duel step runs for real (so
the copies stay in lockstep) but reports the step time the machine of the
moment would have measured, per candidate; the load signals read quiet
throughout (``SimulatedLoad()``), as in the issue.
"""

import json

import pytest

from seer_env import stpa
from seer_env.envs import pcs_v0
from seer_env.stpa import cache as stpa_cache
from seer_env.stpa import chooser, cost_model, hardware
from seer_env.stpa import load as stpa_load
from seer_env.stpa import reuse as stpa_reuse
from seer_env.stpa.preflight import SERIAL, Candidate, Preflight

PCS = dict(width=8, height=8, phones_per_cell=8, move_interval=450.0)
X1, X2 = Candidate(1, "parallel"), Candidate(2, "parallel")
# Step times (s) per candidate: the busy moment the entry was made in, the quiet machine.
BUSY = {SERIAL: 5.22e-3, X1: 5.00e-3, X2: 12.9e-3}
QUIET = {SERIAL: 5.22e-3, X1: 5.24e-3, X2: 3.74e-3}


@pytest.fixture(autouse=True)
def machine(monkeypatch, tmp_path):
    """4 usable threads, quiet load signals, a fresh cache file and memo; pool sizes 1 and 2."""
    features = dict(hardware.machine_features(), usable_threads=4, physical_cores=4)
    monkeypatch.setattr(hardware, "machine_features", lambda: dict(features))
    monkeypatch.setattr(stpa_load, "DEFAULT", stpa_load.SimulatedLoad())
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    monkeypatch.setenv("SEER_STPA_CACHE", str(tmp_path / "stpa.json"))
    monkeypatch.delenv("SEER_NUM_THREADS", raising=False)
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([1, 2], {}, 2, "x"))
    monkeypatch.setattr(cost_model, "next_size", lambda measured, most: None)
    return tmp_path / "stpa.json"


def machine_times(monkeypatch, times):
    """From now on every timed step reports ``times[candidate]``."""
    real = Preflight._timed_step

    def timed_step(self, candidate, step):
        _, last = real(self, candidate, step)
        return times[candidate], last

    monkeypatch.setattr(Preflight, "_timed_step", timed_step)


def new_process(monkeypatch):
    """What a new process starts with: no entry re-validated yet."""
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())


def counted_preflights(monkeypatch):
    calls = []
    real = chooser._preflight

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(chooser, "_preflight", counting)
    return calls


def auto_env():
    """An env that lets STPA choose, at its first reset."""
    env = pcs_v0.parallel_env(**PCS, num_threads="auto", seed=0)
    env.reset()
    return env


def busy_entry(monkeypatch, cache_file):
    """The entry of the issue: parallel x1, stored as measured on a quiet machine."""
    machine_times(monkeypatch, BUSY)
    assert auto_env().runtime.stpa["choice"] == {"executor": "parallel", "num_threads": 1}
    (entry,) = json.loads(cache_file.read_text())["entries"].values()
    assert entry["provisional"] is False  # the signals read quiet
    return entry


def test_auto_returns_to_the_best_choice_within_its_first_reset(monkeypatch, machine):
    busy_entry(monkeypatch, machine)
    new_process(monkeypatch)
    machine_times(monkeypatch, QUIET)
    preflights = counted_preflights(monkeypatch)
    env = auto_env()  # its first reset decides
    report = env.runtime.stpa
    assert report["choice"] == {"executor": "parallel", "num_threads": 2}
    assert env.sim.num_threads == 2
    cache = report["cache"]
    assert cache["outcome"] == "replaced" and len(preflights) == 1
    duel = cache["revalidation"]
    assert duel["cached"] == "parallel x1" and duel["runner_up"] == "parallel x2"
    assert {c["candidate"] for c in duel["challengers"]} == {"serial", "parallel x2"}
    assert [c["won"] for c in duel["challengers"] if c["candidate"] == "parallel x2"] == [True]
    # The quiet decision replaced the entry; the next process re-validates it.
    (entry,) = json.loads(machine.read_text())["entries"].values()
    assert entry["report"]["choice"] == {"executor": "parallel", "num_threads": 2}
    new_process(monkeypatch)
    again = auto_env().runtime.stpa
    assert (again["choice"]["num_threads"], again["source"]) == (2, "cache")
    assert again["cache"]["outcome"] == "revalidated" and len(preflights) == 1


def test_against_its_runner_up_alone_the_busy_entry_held(monkeypatch, machine):
    # What the issue saw: the duel of the cached choice and its runner-up only.
    busy_entry(monkeypatch, machine)
    new_process(monkeypatch)
    machine_times(monkeypatch, QUIET)
    monkeypatch.setattr(stpa_reuse, "MAX_CHALLENGERS", 1)
    report = auto_env().runtime.stpa
    assert (report["choice"]["num_threads"], report["source"]) == (1, "cache")
    assert report["cache"]["revalidation"]["runner_up"] == "serial"


def test_challengers_are_the_runner_up_and_the_measured_neighbours():
    def decision(executor, n, measured):
        cands = [
            {"executor": e, "num_threads": t, "upper_quartile_s": float(s)}
            for (e, t), s in measured.items()
        ]
        return stpa.Decision(executor, n, {"candidates": cands})

    measured = {("serial", 1): 5, ("parallel", 1): 4, ("parallel", 2): 13, ("parallel", 4): 9}
    rivals = stpa_reuse.challengers(decision("parallel", 1, measured), None, 4)
    assert [c.label for c in rivals] == ["serial", "parallel x2"]  # runner-up, then above
    rivals = stpa_reuse.challengers(decision("parallel", 2, measured), None, 4)
    assert [c.label for c in rivals] == ["parallel x1", "parallel x4"]
    rivals = stpa_reuse.challengers(decision("parallel", 4, measured), "parallel", 4)
    assert [c.label for c in rivals] == ["parallel x1", "parallel x2"]  # serial not allowed
    rivals = stpa_reuse.challengers(decision("parallel", 2, measured), None, 2)
    assert [c.label for c in rivals] == ["parallel x1"]  # x4 above the usable threads
    assert stpa_reuse.challengers(decision("serial", 1, {("serial", 1): 5}), None, 4) == []


def test_an_entry_older_than_a_week_or_from_the_future_is_measured_again(monkeypatch, machine):
    machine_times(monkeypatch, QUIET)
    auto_env()
    new_process(monkeypatch)
    preflights = counted_preflights(monkeypatch)
    data = json.loads(machine.read_text())
    for entry in data["entries"].values():
        entry["stored_at"] -= stpa_cache.MAX_AGE_S + 60
    machine.write_text(json.dumps(data))
    report = auto_env().runtime.stpa
    assert len(preflights) == 1 and report["source"] == "preflight"
    assert "older than 7 days" in report["cache"]["status"]
    assert not stpa_cache.expired({"stored_at": 1000.0}, now=1000.0 + stpa_cache.MAX_AGE_S - 1)
    assert stpa_cache.expired({"stored_at": 1000.0}, now=1000.0 + stpa_cache.MAX_AGE_S + 1)
    assert stpa_cache.expired({"stored_at": 1000.0 + 2 * stpa_cache.FUTURE_SLACK_S}, now=1000.0)
