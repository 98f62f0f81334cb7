"""The load signals (``seer_env.stpa.load``): CPU pressure, steal, run fraction, parsing."""

import pytest

from seer_env.stpa import load as stpa_load

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def test_load_window_arithmetic():
    signal = stpa_load.LoadSignal()
    before = stpa_load.Reading(10.0, 1_000_000, 0.0, 0.5, 100, 10_000)
    after = stpa_load.Reading(10.5, 1_200_000, 0.0, 0.5, 160, 10_200)
    c = signal.over(before, after, run_cpu_s=0.3, run_wall_s=0.4)
    assert c.cpu_pressure == pytest.approx(0.4)  # 0.2 s waited in a 0.5 s window
    assert c.steal == pytest.approx(0.3)
    assert c.run_fraction == pytest.approx(0.75)
    assert c.contended and len(c.reasons) == 3
    quiet = signal.over(before, stpa_load.Reading(10.5, 1_010_000, 0.0, 0.5, 100, 10_200), 0.4, 0.4)
    assert not quiet.contended and quiet.summary() == "quiet"
    # Too little stepping to judge the run fraction; counters missing: no signal.
    bare = signal.over(stpa_load.Reading(0.0), stpa_load.Reading(1.0), 1e-4, 5e-4)
    assert (bare.cpu_pressure, bare.steal, bare.run_fraction) == (None, None, None)
    assert not bare.contended


def test_psi_and_proc_stat_parsing():
    avg10, total = stpa_load._psi_some(
        "some avg10=42.50 avg60=1.00 avg300=0.00 total=123456\nfull avg10=0.00 total=0\n"
    )
    assert (avg10, total) == (pytest.approx(0.425), 123456)
    assert stpa_load._psi_some(None) == (None, None)
    assert stpa_load._psi_some("some avg10=x total=y") == (None, None)
    steal, ticks = stpa_load._cpu_ticks("cpu  10 0 5 80 1 0 1 3 0 0\ncpu0 1 2 3\n")
    assert (steal, ticks) == (3, 100)
    assert stpa_load._cpu_ticks("cpu 1 2") == (None, None)
    signal = stpa_load.LoadSignal()
    reading = signal.read()
    assert reading.pressure_avg10 is None or 0.0 <= reading.pressure_avg10 <= 1.0
    assert not signal.now().window_s
