"""prewake(): a hint that wakes parked worker threads before a step; it changes no result."""

import threading
import time

import numpy as np
import pytest

from seer_env import vector
from seer_env.envs import pcs_v0

CFG = dict(width=6, height=5, move_interval=300, seed=4)
PARK = 0.002  # seconds: well past the pool's 200 us spin window, so workers park


EXECUTORS = [("serial", 1), ("parallel", 2), ("parallel", 4), ("barrier", 3), ("locked", 2)]


@pytest.mark.parametrize("executor,threads", EXECUTORS)
def test_prewake_between_steps_changes_nothing(executor, threads):
    hinted = pcs_v0.parallel_env(**CFG, executor=executor, num_threads=threads)
    plain = pcs_v0.parallel_env(**CFG, executor="serial")
    hinted.sim.prewake()  # before reset: no simulation state yet, nothing to wake
    hinted.reset()
    plain.reset()
    actions = np.random.default_rng(0).integers(0, 4, len(plain.possible_agents))
    for step in range(12):
        time.sleep(PARK)
        hinted.sim.prewake()
        if step % 3 == 0:
            hinted.sim.prewake()  # twice is harmless
        if step % 3 == 1:
            time.sleep(PARK)  # woken workers give up spinning and park again
        obs_h, *_ = hinted.step_arrays(actions)
        obs_p, *_ = plain.step_arrays(actions)
        assert obs_h.tobytes() == obs_p.tobytes()
        assert hinted.sim.digest() == plain.sim.digest()


def test_vector_env_prewake_changes_nothing():
    venv = vector.make("pcs_v0", num_envs=3, executor="parallel", num_threads=2, width=4, height=4)
    serial = vector.make("pcs_v0", num_envs=3, executor="serial", width=4, height=4)
    venv.reset(seed=7)
    serial.reset(seed=7)
    rng = np.random.default_rng(1)
    for _ in range(8):
        time.sleep(PARK)
        venv.sim.prewake()
        actions = rng.integers(0, 11, size=venv.num_envs)
        assert venv.step(actions)[0].tobytes() == serial.step(actions)[0].tobytes()


def test_prewake_while_another_thread_steps_is_skipped():
    env = pcs_v0.parallel_env(width=32, height=32, executor="parallel", num_threads=2, seed=1)
    env.reset()
    actions = np.zeros(len(env.possible_agents), dtype=np.int64)
    stop = threading.Event()
    errors = []

    def hint_forever():
        try:
            while not stop.is_set():
                env.sim.prewake()  # never raises, even mid-step
        except Exception as error:  # pragma: no cover - the assertion below reports it
            errors.append(error)

    hinter = threading.Thread(target=hint_forever)
    hinter.start()
    try:
        for _ in range(20):
            env.step_arrays(actions)
    finally:
        stop.set()
        hinter.join()
    assert errors == []
