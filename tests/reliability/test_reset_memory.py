"""RSS stays flat over many resets on every executor and the vector env.

pcs's on_init sends to other entities: with >= 2 threads, workers allocate
queue nodes that the reset's clear() returned to the caller's pool, so every
reset used to allocate fresh blocks (16x16: +76 MB over 5000 resets).
"""

import os

import numpy as np
import pytest

from seer_env import vector
from seer_env.envs import pcs_v0

pytestmark = pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="ASan's quarantine keeps freed memory: RSS grows by design",
)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def growth_over(reset, cycles):
    for i in range(max(50, cycles // 5)):  # warm-up: pools, allocator arenas
        reset(i)
    before = rss_bytes()
    for i in range(cycles):
        reset(i)
    return rss_bytes() - before


# The leak was ~15 KB a reset at 16x16 (76 MB / 5000): 600 resets show ~9 MB.
LIMIT = 1 << 20


@pytest.mark.parametrize(
    "executor,num_threads",
    [
        ("serial", 1),
        ("parallel", 1),
        ("parallel", 2),
        ("parallel", 3),
        ("locked", 2),
        ("barrier", 2),
    ],
)
def test_resets_keep_rss_flat(executor, num_threads):
    env = pcs_v0.parallel_env(width=16, height=16, executor=executor, num_threads=num_threads)
    growth = growth_over(lambda i: env.reset(seed=i), 600)
    assert growth < LIMIT, f"RSS grew by {growth / 1024:.0f} KiB over 600 resets"


@pytest.mark.parametrize("executor,num_threads", [("serial", 1), ("parallel", 2)])
def test_vector_resets_keep_rss_flat(executor, num_threads):
    venv = vector.make(
        "pcs_v0", num_envs=4, width=16, height=16, executor=executor, num_threads=num_threads
    )
    growth = growth_over(lambda i: venv.reset(seed=i), 300)
    assert growth < LIMIT, f"RSS grew by {growth / 1024:.0f} KiB over 300 vector resets"
    actions = np.zeros(venv.num_envs, np.int64)
    venv.step(actions)
