"""The machine's features (``seer_env.stpa.hardware``): CPUs, affinity, quota, pressure."""

import pytest

from seer_env.stpa import hardware

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")

_REAL_PRESSURE = hardware.cpu_pressure


def test_cpu_pressure_is_a_fraction_or_none():
    value = _REAL_PRESSURE()
    assert value is None or 0.0 <= value <= 1.0


def test_usable_threads_respects_affinity_and_quota(monkeypatch, tmp_path):
    monkeypatch.setattr(hardware, "allowed_cpus", lambda: [0, 1, 2, 3])
    monkeypatch.setattr(hardware, "cgroup_cpu_quota", lambda: None)
    assert hardware.usable_threads() == 4
    monkeypatch.setattr(hardware, "cgroup_cpu_quota", lambda: 2.5)
    assert hardware.usable_threads() == 2
    monkeypatch.setattr(hardware, "cgroup_cpu_quota", lambda: 0.5)
    assert hardware.usable_threads() == 1


def test_cgroup_v2_quota_is_read(monkeypatch, tmp_path):
    (tmp_path / "job").mkdir()
    (tmp_path / "cpu.max").write_text("max 100000\n")
    (tmp_path / "job" / "cpu.max").write_text("150000 100000\n")
    monkeypatch.setattr(hardware, "_CGROUP_ROOT", tmp_path)
    monkeypatch.setattr(hardware, "_cgroup_paths", lambda: [("", "/job")])
    assert hardware.cgroup_cpu_quota() == 1.5


def test_machine_features_are_sane():
    f = hardware.machine_features()
    assert 1 <= f["usable_threads"] <= f["logical_cpus"]
    assert 1 <= f["physical_cores"] <= f["usable_threads"]
    assert set(hardware.fingerprint(f)) <= set(f)
