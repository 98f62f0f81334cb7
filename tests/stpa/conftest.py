"""The STPA tests' fixtures: an isolated cache and process memo, a machine, a preflight counter.

Not autouse here: a test file opts in (``pytestmark``), so the files that exercise the
real machine or its missing /proc files (test_missing_proc_files.py) keep it.
"""

import pytest
from stpa_machine import QUIET, fake_features, simulate_load

from seer_env.stpa import chooser, hardware, measure
from seer_env.stpa import reuse as stpa_reuse


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """Every test gets its own cache file and memo, no SEER_NUM_THREADS, and a quiet machine."""
    simulate_load(monkeypatch, QUIET)
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    monkeypatch.setenv("SEER_STPA_CACHE", str(tmp_path / "stpa.json"))
    monkeypatch.delenv("SEER_NUM_THREADS", raising=False)
    return tmp_path / "stpa.json"


@pytest.fixture
def machine(monkeypatch):
    """Pretend this machine has 4 usable threads (the preflight still runs for real)."""
    features = fake_features(4)
    monkeypatch.setattr(hardware, "machine_features", lambda: dict(features))
    return features


@pytest.fixture
def preflights(monkeypatch):
    """Count preflights."""
    calls = []
    real = measure._preflight

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(chooser, "_preflight", counting)
    return calls
