"""Under contention a measured loss is never overridden by the static model's optimum."""

from seer_env import stpa
from seer_env.stpa import cost_model
from seer_env.stpa.preflight import Candidate
from seer_env.stpa.rules import CONTENDED_LOSS


def decide(scores, predicted):
    plan = cost_model.Plan([1, 2], predicted, min(predicted, key=predicted.get), "x")
    return stpa._decide(
        list(scores),
        scores,
        contended=True,
        plan=plan,
        serial_s=1.0,
        pool=Candidate(plan.best, "parallel"),
    )


def test_an_optimum_that_measured_twice_serial_is_not_chosen():
    # pcs_v1 128x128 under load: x2 measured 55.9 ms, serial 27.2 ms, x2 predicted to pay.
    serial, two = stpa.SERIAL, Candidate(2, "parallel")
    choice, reason = decide({serial: 27.2e-3, two: 55.9e-3}, {1: 1.1, 2: 0.6})
    assert choice == serial
    assert "static model's optimum, parallel x2, measured 2.06x serial's step" in reason
    assert "a measured loss" in reason


def test_an_optimum_that_ties_with_serial_still_stands():
    serial, two = stpa.SERIAL, Candidate(2, "parallel")
    choice, reason = decide({serial: 1.0, two: 1.0 + CONTENDED_LOSS / 2}, {1: 1.1, 2: 0.6})
    assert choice == two and "static model's optimum" in reason
