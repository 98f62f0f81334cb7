"""Snapshot writes the compile-time check cannot see are caught by the default checked steps.

The read-only check (`read_only.py`) follows a record through indexing,
fields, assignments and helper calls; a write through a view made by
`ravel()`, `np.asarray` or by iterating over the snapshot escapes it, and the
compiled write happens. A plain env (no `check=True`) checks its first
`check_steps` steps by default, which is enough: the write in the first step
is a ContractViolation, on any executor.
"""

import numpy as np
import pytest
from numba_faulty import Faulty

import seer_env
from seer_env import SeerParallelEnv

pytest.importorskip("numba")

RAVEL, ASARRAY, ITERATION = 9, 10, 11  # past the faults Faulty itself reads


class Escapes(Faulty):
    """Faulty's ring, whose on_event writes the snapshot in a way picked by params["fault"]."""

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        state["pings"] += payload["hops"]
        fault = params["fault"]
        if fault == RAVEL:
            snapshot.ravel()[0]["pings"] = 99
        elif fault == ASARRAY:
            np.asarray(snapshot)[0]["pings"] = 99
        elif fault == ITERATION:
            for row in snapshot:
                row["pings"] = 99


@pytest.mark.parametrize("fault", [RAVEL, ASARRAY, ITERATION], ids=["ravel", "asarray", "iter"])
@pytest.mark.parametrize("executor, threads", [("serial", 1), ("parallel", 2)])
def test_default_checked_steps_catch_a_snapshot_write_the_compiler_check_misses(
    fault, executor, threads
):
    env = SeerParallelEnv(Escapes, {"fault": fault}, executor=executor, num_threads=threads)
    env.reset(seed=0)  # compiled: the compile-time check did not see the write
    with pytest.raises(
        seer_env.ContractViolation,
        match=r"the snapshot record of entity \d+ changed during the step",
    ):
        env.step({a: 1 for a in env.agents})


def test_without_the_checked_steps_the_write_goes_unnoticed():
    # What the default guards against: check_steps=0 lets the write through.
    env = SeerParallelEnv(Escapes, {"fault": RAVEL}, num_threads=1, check_steps=0)
    env.reset(seed=0)
    env.step({a: 1 for a in env.agents})
