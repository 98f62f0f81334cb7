"""The ``num_threads`` option (``seer_env.stpa.threads``): "auto" or an int, else ValueError.

(Its oversubscription warning: tests/stpa/test_oversubscription.py.)
"""

import pytest
from stpa_machine import PCS

import seer_env
from seer_env import stpa
from seer_env.envs import pcs_v0

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


@pytest.mark.parametrize("value", ["auto", "AUTO", " auto "])
def test_auto_is_accepted_in_any_case_with_spaces_around(value):
    assert stpa.parse_num_threads(value) == "auto"
    pcs_v0.parallel_env(**PCS, executor=None, num_threads=value)
    seer_env.make("pcs_v0", **PCS, num_threads=value)


@pytest.mark.parametrize("value", [0, 1025, -1, "fast", 1.5, True, None, "", [2]])
def test_invalid_num_threads_names_it(value):
    with pytest.raises(ValueError, match="num_threads"):
        stpa.parse_num_threads(value)
    with pytest.raises(ValueError, match="num_threads"):
        pcs_v0.parallel_env(**PCS, num_threads=value)


def test_int_num_threads_still_work_and_pick_the_executor():
    env = seer_env.SeerParallelEnv("pcs", dict(width=4, height=4), num_threads=2)
    env.reset(seed=0)
    assert (env.runtime.executor, env.runtime.num_threads) == ("parallel", 2)
    env = seer_env.SeerParallelEnv("pcs", dict(width=4, height=4), num_threads=1)
    assert env.runtime.executor == "serial"
