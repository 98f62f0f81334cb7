"""Ctrl-C and close() reach a compiled loop that never ends; helpers are checked like handlers.

Each case runs in a subprocess with a timeout: the failure these tests guard
against is a hang (or, for the overrun, a write past an array).
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

SUPPORT = Path(__file__).resolve().parents[1] / "support"

_PRELUDE = """
import os, signal, sys, threading, time
sys.path.insert(0, {support!r})
import numpy as np
import seer_env
from numba_endless import Endless, NONE, IN_EVENT, IN_OBSERVE, IN_HELPER, HELPER_OVERRUN


def sigint_in(seconds):
    threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT)).start()
"""


def run(body: str) -> str:
    script = _PRELUDE.format(support=str(SUPPORT)) + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fault", ["IN_EVENT", "IN_HELPER"])
def test_ctrl_c_stops_a_step_whose_compiled_loop_never_ends(fault, threads):
    out = run(
        f"""
        env = seer_env.SeerParallelEnv(Endless, {{"n": 4, "fault": {fault}}}, num_threads={threads})
        env.reset(seed=0)
        sigint_in(0.5)
        started = time.perf_counter()
        try:
            env.step({{a: 1 for a in env.agents}})
            print("not interrupted")
        except KeyboardInterrupt:
            print(f"interrupted after {{time.perf_counter() - started:.1f}} s")
        # The env is usable again after reset(), and so is a sound env of the same process.
        env.reset(seed=1)
        env.close()
        sound = seer_env.SeerParallelEnv(Endless, {{"n": 4}}, num_threads={threads})
        sound.reset(seed=0)
        for _ in range(3):
            sound.step({{a: 1 for a in sound.agents}})
        print("sound env stepped", sound.runtime.events > 0)
        sound.close()
        """
    )
    assert "interrupted after" in out, out
    assert "sound env stepped True" in out, out


def test_ctrl_c_stops_a_boundary_hook_whose_loop_never_ends():
    out = run(
        """
        env = seer_env.SeerParallelEnv(Endless, {"n": 4, "fault": IN_OBSERVE}, num_threads=2)
        sigint_in(0.5)
        try:
            env.reset(seed=0)  # observes every agent
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted")
        env.close()
        """
    )
    assert "interrupted" in out and "not interrupted" not in out, out


def test_close_interrupts_a_vector_step_whose_compiled_loop_never_ends():
    out = run(
        """
        from seer_env import vector
        envs = vector.make(Endless, num_envs=2, n=4, fault=IN_EVENT, num_threads=1)
        envs.reset(seed=0)
        envs.step_async(np.ones(envs.num_envs, np.int64))
        time.sleep(0.5)
        started = time.perf_counter()
        envs.close()
        print(f"closed after {time.perf_counter() - started:.1f} s")
        """
    )
    assert "closed after" in out, out


def test_an_index_past_a_helpers_array_is_a_handler_error():
    out = run(
        """
        env = seer_env.SeerParallelEnv(Endless, {"n": 4, "fault": HELPER_OVERRUN}, num_threads=1)
        try:
            env.reset(seed=0)
            print("not caught")
        except seer_env.HandlerError as error:
            print("HandlerError:", error)
        """
    )
    assert "HandlerError:" in out and "observe" in out, out
