"""Thread-pool selection on a system without Linux's /proc and /sys files or calls.

macOS and Windows have no /proc/pressure, /proc/stat, cgroup files, CPU topology under
/sys, os.sched_getaffinity or (Windows) os.getloadavg: every reader answers "unknown"
and STPA still decides.
"""

import os

import numpy as np
import pytest

import seer_env
from seer_env.stpa import cache, hardware, load, measure


@pytest.fixture
def no_linux_files(monkeypatch, tmp_path):
    monkeypatch.setattr(hardware, "_read", lambda path: None)
    monkeypatch.setattr(load, "_read", lambda path: None)
    monkeypatch.setattr(hardware, "_SYS_CPU", tmp_path / "no_sys_cpu")
    monkeypatch.setattr(hardware, "_CGROUP_ROOT", tmp_path / "no_cgroup")
    for name in ("sched_getaffinity", "getloadavg"):
        if hasattr(os, name):
            monkeypatch.delattr(os, name)
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "stpa_cache"))


def test_the_machine_features_fall_back_to_the_cpu_count(no_linux_files):
    features = hardware.machine_features()
    cpus = os.cpu_count() or 1
    assert features["affinity_cpus"] == features["usable_threads"] == cpus
    assert features["cgroup_quota_cpus"] is None and features["caches"] == {}
    assert features["physical_cores"] == cpus and features["smt_per_core"] == 1
    assert hardware.cpu_pressure() is None and isinstance(hardware.cpu_model(), str)


def test_the_load_signal_knows_nothing_and_blames_nothing(no_linux_files):
    signal = load.LoadSignal()
    before = signal.read()
    after = signal.read()
    assert (before.pressure_avg10, before.load_average, before.steal_ticks) == (None, None, None)
    assert not signal.now().contended and not signal.over(before, after).contended
    assert measure._load_average() is None


def test_auto_still_chooses(no_linux_files):
    env = seer_env.make("pcs_v0", width=4, height=4, num_threads="auto")
    env.reset(seed=0)
    env.step_arrays(np.zeros(len(env.possible_agents), dtype=np.int64))
    assert env.runtime.executor in seer_env.executor_names() and env.runtime.num_threads >= 1
    env.close()
