"""The decision rules (``seer_env.stpa.rules``): which measured candidate is chosen.

Under contention a measured loss is never overridden by the static model's optimum.
"""

import pytest

from seer_env.stpa import cost_model, rules
from seer_env.stpa.preflight import SERIAL, Candidate
from seer_env.stpa.rules import CONTENDED_LOSS

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def test_contended_pick_prefers_more_threads_within_the_tie():
    serial, one, two = SERIAL, Candidate(1, "parallel"), Candidate(2, "parallel")
    tied = {serial: 1.0, one: 1.01, two: 1.02}
    assert rules._pick(list(tied), tied)[0] == serial
    choice, reason = rules._pick_contended(list(tied), tied)
    assert choice == two and "with more threads" in reason
    slower = {serial: 1.0, one: 1.01, two: 1.2}  # 2 threads slower even at its best
    assert rules._pick_contended(list(slower), slower)[0] == one
    assert rules._pick_contended(list(slower), slower, 0.25)[0] == two  # a wider tie


def test_contended_decision_takes_more_threads_only_where_a_pool_can_pay():
    serial, two = SERIAL, Candidate(2, "parallel")
    tied = {serial: 1.0, two: 1.02}  # measured under load: a tie (the pool had shed)
    allowed = list(tied)

    def decide(predicted, contended=True):
        plan = cost_model.Plan([2], predicted, min(predicted, key=predicted.get), "x")
        return rules._decide(
            allowed,
            tied,
            contended=contended,
            plan=plan,
            serial_s=1.0,
            pool=Candidate(plan.best, "parallel"),
        )[0]

    # A tiny env: no pool predicted to pay on free cores, so no extra thread.
    assert decide({1: 3.0, 2: 2.0}) == serial
    # A pool predicted to pay: its optimum, or the most threads within the tie.
    assert decide({1: 1.1, 2: 0.6}) == two
    assert decide({1: 0.9, 2: 0.95}) == two  # x1 predicted best, x2 pays too
    # Quiet: fewest threads within the tie, whatever the model says.
    assert decide({1: 1.1, 2: 0.6}, contended=False) == serial


# -- a measured loss under contention --------------------------------------------------------------


def decide_contended(scores, predicted):
    plan = cost_model.Plan([1, 2], predicted, min(predicted, key=predicted.get), "x")
    return rules._decide(
        list(scores),
        scores,
        contended=True,
        plan=plan,
        serial_s=1.0,
        pool=Candidate(plan.best, "parallel"),
    )


def test_an_optimum_that_measured_twice_serial_is_not_chosen():
    # pcs_v1 128x128 under load: x2 measured 55.9 ms, serial 27.2 ms, x2 predicted to pay.
    serial, two = SERIAL, Candidate(2, "parallel")
    choice, reason = decide_contended({serial: 27.2e-3, two: 55.9e-3}, {1: 1.1, 2: 0.6})
    assert choice == serial
    assert "static model's optimum, parallel x2, measured 2.06x serial's step" in reason
    assert "a measured loss" in reason


def test_an_optimum_that_ties_with_serial_still_stands():
    serial, two = SERIAL, Candidate(2, "parallel")
    choice, reason = decide_contended(
        {serial: 1.0, two: 1.0 + CONTENDED_LOSS / 2}, {1: 1.1, 2: 0.6}
    )
    assert choice == two and "static model's optimum" in reason
