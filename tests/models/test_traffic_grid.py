"""The traffic grid speed model: its NumbaModel and its C++ twin are the same model, bit for bit.

The speed comparison (tests/support/traffic_grid_speed.py, docs/custom-models.md
"Speed") is only meaningful between equivalent implementations; this is that
check, not a timing.
"""

import pytest

from seer_env.testing import verify

pytest.importorskip("numba")

from traffic_grid_numba import TrafficGridNumba  # noqa: E402

SMALL = {"width": 4, "height": 3, "cars_per_approach": 2}


def test_the_numba_model_and_its_cpp_twin_are_equivalent():
    report = verify(TrafficGridNumba, "traffic_grid", config=SMALL, seeds=(0, 1), steps=10,
                    threads=(2,))  # fmt: skip
    assert report.ok and not report.warnings, str(report)
    checks = {c.name: c for c in report.checks}
    assert checks["declarations"].status == "ok"
    assert "entity states, pending events and the digest" in checks["prototype vs port"].detail
    assert "SERVE " in checks["coverage (port)"].detail
    assert checks["interpreted vs compiled (port)"].status == "ok"


def test_the_speed_script_measures_both_implementations():
    import traffic_grid_speed

    ratios = traffic_grid_speed.measure([2], steps=2, rounds=1)
    assert set(ratios) == {(2, 4), (2, 0)}  # with cars, and idle
    assert all(r.a_seconds > 0 and r.b_seconds > 0 for r in ratios.values())
