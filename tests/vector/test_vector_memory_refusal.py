"""A vector env too big for memory is refused before anything big is allocated.

The child runs under a 1 GiB address-space limit with SEER_MEMORY_LIMIT=1 GiB:
65536 instances of pcs 16x16 need ~49 GB by the estimate, and their batched
spaces alone (two arrays over 16.7M rows) would be ~3 GB, a MemoryError.
"""

import subprocess
import sys
import textwrap

import pytest

REFUSE_UNDER_RLIMIT = textwrap.dedent(
    """
    import os, resource, sys, time
    limit = 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.environ["SEER_MEMORY_LIMIT"] = str(limit)
    from seer_env import vector
    vector.make("pcs_v0", 2, width=4, height=4, executor="serial").reset(seed=0)  # fits
    start = time.monotonic()
    try:
        vector.{make}("pcs_v0", 65536, width=16, height=16, executor="serial")
    except ValueError as exc:
        assert "needs about" in str(exc) and "num_envs=" in str(exc), exc
        print("refused in", time.monotonic() - start)
    """
)


@pytest.mark.parametrize("make", ["make", "make_async"])
def test_a_vector_env_too_big_for_memory_is_refused_before_allocating(make):
    proc = subprocess.run(
        [sys.executable, "-c", REFUSE_UNDER_RLIMIT.format(make=make)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "refused in" in proc.stdout, proc.stdout + proc.stderr
    assert float(proc.stdout.split()[-1]) < 5.0
