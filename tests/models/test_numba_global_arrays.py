"""A compiled handler that writes a global numpy array: one clear error, numba's as its cause.

numba freezes a module-level array into the compiled code as a read-only
constant; the write is a TypingError of dozens of lines (terminal colour codes
included). The error names the handler, the global and the line instead.
"""

import inspect

import numpy as np
import pytest
from numba_faulty import Faulty

import seer_env
from seer_env import SeerParallelEnv

pytest.importorskip("numba")
from numba.core.errors import TypingError  # noqa: E402

COUNTS = np.zeros(4)
TABLE = np.arange(4.0)  # read only: fine


@seer_env.kernel
def tally(kind):
    COUNTS[kind] += 1.0


class WritesAGlobal(Faulty):
    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        state["pings"] += payload["hops"]
        COUNTS[0] = TABLE[1]


class WritesAGlobalInAHelper(Faulty):
    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        state["pings"] += payload["hops"]
        tally(kind)


class ReadsAGlobal(Faulty):
    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        state["pings"] += payload["hops"] + np.uint64(TABLE[1])


def _line(fn, text: str) -> int:
    """The line of this file where ``fn``'s source has ``text``."""
    lines, first = inspect.getsourcelines(getattr(fn, "py_func", fn))
    return first + next(i for i, line in enumerate(lines) if text in line)


def _refusal(model) -> seer_env.NumbaCompileError:
    with pytest.raises(seer_env.NumbaCompileError) as info:
        SeerParallelEnv(model, {}, num_threads=1)
    return info.value


def test_a_write_to_a_global_array_names_the_handler_the_global_and_the_line():
    error = _refusal(WritesAGlobal)
    message = str(error)
    assert message.startswith(
        "WritesAGlobal.on_event writes the global array `COUNTS` "
        f"(test_numba_global_arrays.py, line {_line(WritesAGlobal.on_event, 'COUNTS[0]')}): "
        "numba compiles a global numpy array"
    )
    assert "read-only constant" in message and "`state`" in message
    assert len(message.splitlines()) == 1 and "\x1b[" not in message
    assert isinstance(error.__cause__, TypingError)  # numba's own error, kept
    assert "readonly array" in str(error.__cause__)


def test_a_write_in_a_helper_names_the_helper():
    message = str(_refusal(WritesAGlobalInAHelper))
    assert message.startswith(
        "WritesAGlobalInAHelper.on_event writes the global array `COUNTS` "
        f"(test_numba_global_arrays.py, line {_line(tally, 'COUNTS[kind]')}, in tally, which "
        "it calls)"
    )


def test_reading_a_global_array_compiles_and_runs():
    env = SeerParallelEnv(ReadsAGlobal, {}, num_threads=1)
    env.reset(seed=0)
    env.step({a: 1 for a in env.agents})
    assert COUNTS.tolist() == [0.0] * 4
