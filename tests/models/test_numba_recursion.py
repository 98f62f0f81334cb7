"""Recursion in a NumbaModel: what is refused, what raises, how to find a deep one.

numba keeps no recursion depth: a recursive `numba.njit` function that goes
too deep overflows the C stack and the process dies (segfault), in both
modes (docs/custom-models.md, "Errors"). What the tests pin: a recursive
`@seer_env.kernel` helper is refused at compile time; interpreted it raises
RecursionError as a HandlerError; and with `NUMBA_DISABLE_JIT=1` an `njit`
recursion raises there too, which is how to find one.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba_faulty import Faulty

import seer_env
from seer_env import SeerParallelEnv

pytest.importorskip("numba")

SUPPORT = Path(__file__).resolve().parents[1] / "support"


@seer_env.kernel
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)


class DeepKernel(Faulty):
    """Faulty, whose reward recurses through a @seer_env.kernel helper."""

    @staticmethod
    def reward(agent, state, snapshot, params):
        return np.float64(depth(10**6))


def test_a_recursive_kernel_helper_is_refused_when_compiled():
    with pytest.raises(seer_env.NumbaCompileError, match=r"DeepKernel\.reward cannot be compiled"):
        SeerParallelEnv(DeepKernel, {}, num_threads=1)


def test_a_deep_recursion_interpreted_is_a_handler_error():
    env = SeerParallelEnv(DeepKernel, {"compiled": False}, num_threads=1)
    with pytest.raises(seer_env.HandlerError, match=r"reward\(0\) at t=0: RecursionError"):
        env.reset(seed=0)  # the first rewards are read at the reset


_NJIT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {support!r})
    import numba, numpy as np
    import seer_env
    from numba_faulty import Faulty

    @numba.njit
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    class DeepNjit(Faulty):
        @staticmethod
        def reward(agent, state, snapshot, params):
            return np.float64(depth(10**7))

    env = seer_env.SeerParallelEnv(DeepNjit, {{"compiled": False}}, num_threads=1)
    try:
        env.reset(seed=0)
    except seer_env.HandlerError as error:
        print(str(error).splitlines()[0])
    """
)


def test_numba_disable_jit_turns_a_deep_njit_recursion_into_a_handler_error():
    # Without NUMBA_DISABLE_JIT this child would die of a stack overflow.
    done = subprocess.run(
        [sys.executable, "-c", _NJIT.format(support=str(SUPPORT))],
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reward(0) at t=0: RecursionError" in done.stdout
