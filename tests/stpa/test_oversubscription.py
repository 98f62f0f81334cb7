"""An explicit pool larger than the usable CPUs warns (its workers spin and get preempted)."""

import warnings

import pytest

import seer_env
from seer_env import vector
from seer_env.envs import pcs_v0
from seer_env.stpa import hardware

CFG = dict(width=4, height=4)


@pytest.fixture
def two_cpus(monkeypatch):
    monkeypatch.setattr(hardware, "usable_threads", lambda: 2)


def test_more_threads_than_cpus_warns_at_the_callers_line(two_cpus):
    with pytest.warns(seer_env.OversubscriptionWarning, match="num_threads=3 exceeds the 2") as rec:
        pcs_v0.parallel_env(**CFG, num_threads=3)
    assert rec[0].filename == __file__  # points at the user's code, not inside seer_env
    with pytest.warns(seer_env.OversubscriptionWarning, match="num_threads=5"):
        vector.make("pcs_v0", num_envs=2, **CFG, num_threads=5)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_threads=2),
        dict(num_threads=1),
        dict(num_threads="auto"),
        dict(num_threads=1, executor="serial"),  # serial with more threads is refused
    ],
)
def test_no_warning_within_the_cpus_or_without_threads(two_cpus, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", seer_env.OversubscriptionWarning)
        pcs_v0.parallel_env(**CFG, **kwargs)
