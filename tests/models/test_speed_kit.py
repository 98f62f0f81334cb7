"""``seer_env.testing.speed``: two implementations of a model stepped in turn."""

import math

import pytest

from seer_env.testing.speed import StepRatio, serial_step_ratio

pytest.importorskip("numba")

from numba_pcs import NumbaPcs  # noqa: E402

TINY = {"width": 2, "height": 2, "phones_per_cell": 4}


def test_the_ratio_of_a_port_and_the_model_it_ports():
    ratio = serial_step_ratio(NumbaPcs, "pcs", TINY, steps=3, rounds=2)
    assert isinstance(ratio, StepRatio)
    for value in (ratio.pairs, ratio.fastest, ratio.rounds, ratio.a_seconds, ratio.b_seconds):
        assert math.isfinite(value) and value > 0
    assert "median of step pairs" in str(ratio)


@pytest.mark.parametrize("steps, rounds", [(0, 1), (1, 0)])
def test_no_steps_is_a_value_error(steps, rounds):
    with pytest.raises(ValueError, match="steps and rounds must be >= 1"):
        serial_step_ratio(NumbaPcs, "pcs", TINY, steps=steps, rounds=rounds)
