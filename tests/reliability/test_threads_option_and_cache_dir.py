"""Small refusals and reports: ``num_threads`` as text, the STPA cache with an empty
``HOME``, and what a checked step says about its threads."""

import os
import subprocess
import sys

import numpy as np
import pytest
from envcases import make

import seer_env
from seer_env import stpa


@pytest.mark.parametrize("value", ["4", " 2 ", "1"])
def test_num_threads_as_a_string_is_refused(value):
    with pytest.raises(
        ValueError, match=rf'num_threads must be "auto" or an integer, got {value!r}'
    ):
        stpa.parse_num_threads(value)
    with pytest.raises(ValueError, match="num_threads"):
        make("pcs_v0", num_threads=value)


def test_the_environment_variable_is_text_and_may_be_an_integer():
    assert stpa.parse_num_threads("4", "SEER_NUM_THREADS", from_environment=True) == 4


@pytest.mark.parametrize("home", ["", "relative/dir"])
def test_an_empty_or_relative_home_means_no_cache_not_the_root_directory(home):
    env = {k: v for k, v in os.environ.items() if k not in ("SEER_STPA_CACHE", "XDG_CACHE_HOME")}
    env["HOME"] = home
    code = "from seer_env.stpa import cache; print(cache.default_path())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"


def test_a_relative_xdg_cache_home_is_ignored():
    env = {k: v for k, v in os.environ.items() if k != "SEER_STPA_CACHE"}
    env.update(XDG_CACHE_HOME="rel", HOME="/tmp/seer-home")
    code = "from seer_env.stpa import cache; print(cache.default_path())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "/tmp/seer-home/.cache/seer_env/stpa.json", out.stderr


def test_a_checked_step_reports_the_one_thread_it_ran_on():
    sim = seer_env.Simulation(
        "pcs", {"width": 4, "height": 4}, executor="parallel", num_threads=2, check=True
    )
    sim.reset(0)
    sim.step(np.zeros(16, np.int64))
    last = sim.last_step
    assert last["threads"] == 1
    assert last["thread_decision"].startswith("1 thread: a checked step"), last
    env = make("pcs_v0", executor="parallel", num_threads=2)  # first steps checked by default
    env.reset(seed=0)
    env.step({a: 0 for a in env.agents})
    runtime = env.runtime
    assert runtime.threads_used == 1 and runtime.thread_decision.startswith("1 thread"), runtime
