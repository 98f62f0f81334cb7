"""Compiled handlers may not write their read-only records: refused when they are compiled.

numba lets a write through a record of a read-only array happen, so the check
reads each handler's IR before numba compiles it (read_only.py).
"""

import re

import numpy as np
import pytest
from numba_faulty import Faulty

import seer_env
from seer_env import SeerParallelEnv

numba = pytest.importorskip("numba")

from seer_env.models.numba.read_only import writes_to_read_only  # noqa: E402


@seer_env.kernel
def set_first(rows, value):
    rows[0]["pings"] = value


@seer_env.kernel
def passes_on(rows):
    set_first(rows, 1)


@numba.njit
def clear(record):
    record.fault = 0


def direct(ctx, state, snapshot, params, kind, payload):
    snapshot[1]["pings"] = 1


def through_an_alias_on_one_branch(ctx, state, snapshot, params, kind, payload):
    row = snapshot[0] if kind else state
    row["pings"] = 2


def as_an_attribute(ctx, state, snapshot, params, kind, payload):
    params.fault += 1


def a_nested_field(ctx, state, snapshot, params, kind, payload):
    snapshot["pings"][3] = 4


def a_writing_method(ctx, state, snapshot, params, kind, payload):
    snapshot[0:2].fill(0)


def through_helpers(ctx, state, snapshot, params, kind, payload):
    passes_on(snapshot)


def through_a_jitted_function(ctx, state, snapshot, params, kind, payload):
    clear(params)


def only_writable_records(ctx, state, snapshot, params, kind, payload):
    state["pings"] = snapshot[0]["pings"]
    payload["hops"] += 1
    mine = snapshot.copy()
    mine[0]["pings"] = 5
    set_first(mine, 6)


@pytest.mark.parametrize(
    "handler, expected",
    [
        (direct, [r"line \d+ writes `snapshot`"]),
        (through_an_alias_on_one_branch, [r"line \d+ writes `snapshot`"]),
        (as_an_attribute, [r"line \d+ writes `params`"]),
        (a_nested_field, [r"line \d+ writes `snapshot`"]),
        (a_writing_method, [r"line \d+ calls \.fill\(\) on `snapshot`"]),
        (
            through_helpers,
            [
                r"line \d+ passes `snapshot` to passes_on, whose line \d+ passes `rows` to "
                r"set_first, whose line \d+ writes `rows`"
            ],
        ),
        (
            through_a_jitted_function,
            [r"line \d+ passes `params` to clear, whose line \d+ writes `record`"],
        ),
        (only_writable_records, []),
    ],
)
def test_each_write_to_a_read_only_record_is_found_and_located(handler, expected):
    found = writes_to_read_only("on_event", handler)
    assert len(found) == len(expected), found
    for line, pattern in zip(found, expected):
        assert re.fullmatch(pattern, line), line


def test_which_records_are_read_only_depends_on_the_hook():
    def boundary(agent, state, snapshot, params, out):
        out[0] = 1.0
        state["pings"] = 0

    def snapshot_writer(state, public, params):
        public["pings"] = state["pings"]

    def resets(states, params):
        states[0]["pings"] = 1

    assert writes_to_read_only("observe", boundary) == [
        f"line {boundary.__code__.co_firstlineno + 2} writes `state`"
    ]
    assert writes_to_read_only("write_snapshot", snapshot_writer) == []
    assert writes_to_read_only("reset", resets) == []


def test_a_model_whose_handler_writes_a_read_only_record_is_not_compiled():
    class WritesParams(Faulty):
        @staticmethod
        def reward(agent, state, snapshot, params):
            params["fault"] = 3  # shared by every thread
            return np.float64(0.0)

    with pytest.raises(
        seer_env.NumbaCompileError,
        match=r"WritesParams\.reward writes a read-only record \(.*test_numba_read_only\.py\): "
        r"line \d+ writes `params`",
    ):
        SeerParallelEnv(WritesParams, {}, num_threads=1)
    # Interpreted, the same write fails when it runs (a read-only array).
    env = SeerParallelEnv(WritesParams, {"compiled": False}, num_threads=1)
    with pytest.raises(seer_env.HandlerError, match="read-only"):
        env.reset(seed=0)
