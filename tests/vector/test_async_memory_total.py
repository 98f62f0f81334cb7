"""The async vector env's memory check counts every batch, not one batch's share.

pcs 16x16 needs ~0.74 MB an instance by the estimate: with 36 MB free, 32
instances fit and 64 do not. Split in two batches of 32, each batch alone would
fit; the env must still be refused, before any batch is built.
"""

import pytest

from seer_env import vector

CONFIG = dict(width=16, height=16, executor="serial")


def test_the_first_batch_checks_the_memory_of_all_batches(monkeypatch):
    monkeypatch.setenv("SEER_MEMORY_LIMIT", str(36 * 10**6))
    vector.make("pcs_v0", 32, **CONFIG).close()  # one batch's share fits
    with pytest.raises(ValueError, match="needs about"):
        vector.make("pcs_v0", 64, **CONFIG)
    with pytest.raises(ValueError, match="num_envs=64"):
        vector.make_async("pcs_v0", 64, num_batches=2, **CONFIG)
    env = vector.make_async("pcs_v0", 32, num_batches=2, **CONFIG)  # 2 x 16: fits
    env.close()
