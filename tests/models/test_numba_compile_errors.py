"""Compiling a NumbaModel: failures name the handler; the cache heals; indexes are checked."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from numba_faulty import Faulty

import seer_env
from seer_env import SeerParallelEnv

pytest.importorskip("numba")

SUPPORT = Path(__file__).resolve().parents[1] / "support"


def test_an_endless_loop_without_a_value_is_a_compile_error_naming_the_handler():
    class Endless(Faulty):
        @staticmethod
        def reward(agent, state, snapshot, params):
            while True:
                pass

    with pytest.raises(seer_env.NumbaCompileError, match=r"Endless\.reward cannot be compiled"):
        SeerParallelEnv(Endless, {}, num_threads=1)


def test_numba_internal_errors_are_compile_errors_naming_the_handler(monkeypatch):
    import numba

    class Internal(Faulty):
        pass

    def cfunc(*args, **kwargs):  # what numba raised for `while True:` in some versions
        def compile_it(fn):
            raise AssertionError("liveness info missing for vars: {'x'}")

        return compile_it

    monkeypatch.setattr(numba, "cfunc", cfunc)
    with pytest.raises(seer_env.NumbaCompileError, match=r"Internal\.\w+ cannot be compiled"):
        SeerParallelEnv(Internal, {}, num_threads=1)


_CONSTRUCT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {support!r})
    import seer_env, heat_ring_numba
    from seer_env.models.numba import compile_report
    env = seer_env.SeerParallelEnv(heat_ring_numba.HeatRingNumba, {{}}, num_threads=1)
    env.reset(seed=0)
    env.step({{a: 1 for a in env.agents}})
    print("from_cache", compile_report()["heat_ring_numba.HeatRingNumba"]["from_cache"])
    """
)


def _construct(env) -> subprocess.CompletedProcess:
    script = _CONSTRUCT.format(support=str(SUPPORT))
    return subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_a_truncated_numba_cache_index_heals_itself(tmp_path):
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "SEER_ENV_NUMBA_CACHE": str(tmp_path / "seer"),
    }
    first = _construct(env)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "from_cache False" in first.stdout
    indexes = list(tmp_path.rglob("*.nbi"))
    assert indexes
    for index in indexes:  # a process killed while writing, a full disk
        index.write_bytes(index.read_bytes()[:20])
    healed = _construct(env)
    assert healed.returncode == 0, healed.stderr[-3000:]
    assert "is unreadable (UnpicklingError" in healed.stderr
    assert "from_cache False" in healed.stdout  # it compiled: the report says so
    again = _construct(env)
    assert again.returncode == 0 and "from_cache True" in again.stdout


_OVERRUN = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {support!r})
    import numpy as np
    import seer_env
    from numba_faulty import Faulty

    class Overrun(Faulty):
        @staticmethod
        def observe(agent, state, snapshot, params, out):
            out[50_000_000] = 1.0  # far past the observation

    env = seer_env.SeerParallelEnv(Overrun, {{}}, num_threads=1)
    try:
        env.reset(seed=0)
    except seer_env.HandlerError as error:
        print("HandlerError:", error)
    """
)


@pytest.mark.slow
def test_an_index_out_of_bounds_in_a_compiled_handler_is_a_handler_error(tmp_path):
    # In a subprocess: without the bounds check this write segfaults.
    script = _OVERRUN.format(support=str(SUPPORT))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "HandlerError:" in done.stdout and "observe" in done.stdout
