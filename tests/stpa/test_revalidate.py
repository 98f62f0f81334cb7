"""The re-validation duel (``seer_env.stpa.revalidate``): a cached choice against challengers."""

import json

import pytest
from stpa_machine import PCS, PHOLD, QUIET

from seer_env import stpa
from seer_env.stpa import cost_model, revalidate
from seer_env.stpa import reuse as stpa_reuse
from seer_env.stpa.preflight import Candidate, Preflight

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def test_real_duel_runs_on_copies_and_reports(monkeypatch, machine):
    # Two parallel sizes measured, so the cached choice has a runner-up; no
    # hill-climb to x4 (when x2 measures best it would add x4, which can then
    # be the runner-up: the test failed so in one CI run).
    with monkeypatch.context() as m:
        m.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([1, 2], {}, 2, "x"))
        m.setattr(cost_model, "next_size", lambda measured, most: None)
        first = stpa.choose("phold", PHOLD, executor="parallel")
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    second = stpa.choose("phold", PHOLD, executor="parallel")
    cache = second.report["cache"]
    duel = cache["revalidation"]
    assert duel["cached"] == Candidate(first.num_threads, first.executor).label
    assert {duel["cached"], duel["runner_up"]} == {"parallel x1", "parallel x2"}
    assert duel["pairs"] >= revalidate.MIN_ROUNDS or (  # or stopped early: clearly slower
        duel["held"] and duel["median_ratio"] > 1 + revalidate.MARGIN
    )
    assert cache["outcome"] in ("revalidated", "replaced")
    assert (cache["outcome"] == "revalidated") == duel["held"]
    assert (second.report["source"] == "cache") == duel["held"]
    assert 0 < duel["seconds"] < 5.0
    assert duel["load"]["contended"] is False  # the simulated quiet machine
    json.dumps(second.report)


def test_vector_batch_entry_is_revalidated_on_batches(monkeypatch, machine):
    monkeypatch.setattr(cost_model, "plan", lambda *a, **k: cost_model.Plan([1, 2], {}, 2, "x"))
    stpa.choose("pcs", PCS, executor="parallel", num_envs=4)
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    again = stpa.choose("pcs", PCS, executor="parallel", num_envs=4)
    duel = again.report["cache"]["revalidation"]
    assert duel["pairs"] >= 1 and duel["seconds"] > 0
    assert again.report["features"]["num_envs"] == 4


def test_duel_stops_early_only_when_the_runner_up_is_clearly_slower():
    assert revalidate.clearly_slower([1.5, 1.2])
    assert not revalidate.clearly_slower([1.5, 0.9, 1.5])  # one pair favours it
    assert not revalidate.clearly_slower([1.05, 1.05])  # within the margin
    assert not revalidate.clearly_slower([])
    assert revalidate.paired_ratios([1.0, 2.0, 0.0], [0.5, 3.0, 1.0]) == [0.5, 1.5]


@pytest.mark.parametrize(
    "cached, runner, held",
    [
        ([1.0] * 6, [0.6] * 6, False),  # runner-up 1.6x faster
        ([1.0] * 6, [0.95] * 6, True),  # within the margin
        ([1.0] * 6, [0.5, 0.5, 0.5, 1.2, 1.2, 1.2], True),  # no clear majority
        ([1.0] * 6, [1.3] * 6, True),
    ],
)
def test_duel_replaces_the_cached_choice_only_when_clearly_and_mostly_slower(
    monkeypatch, cached, runner, held
):
    c, r = Candidate(1, "parallel"), Candidate(2, "parallel")

    def rounds(self, timed, order_shift=0, wake=True):
        self.samples[c] = list(cached)
        self.samples[r] = list(runner)

    monkeypatch.setattr(Preflight, "run_round", rounds)
    result = revalidate.duel("phold", PHOLD, c, r, seed=1, signal=QUIET)
    assert result.held is held
    assert result.pairs == 6
