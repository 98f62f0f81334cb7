"""Vector envs for the reliability tests: small ones, long-step ones, and a deadline.

LONG: a step only an interrupt ends (``step_minutes=1e10``, no event budget).
"""

import threading
import time
from contextlib import contextmanager

import numpy as np

from seer_env import vector

SMALL = dict(width=2, height=2, max_cycles=4, check_steps=0)
LONG = dict(width=2, height=2, step_minutes=1e10, event_budget=0, check_steps=0)


def make(kind, num_envs=4, **config):
    """A ``"sync"`` (SeerVectorEnv) or ``"async"`` (2 batches) vector env of pcs_v0."""
    config = dict(dict(executor="serial"), **config)
    if kind == "sync":
        return vector.make("pcs_v0", num_envs, **config)
    return vector.make_async("pcs_v0", num_envs, num_batches=2, **config)


def sims(env):
    """The env's VectorSimulations (one per batch)."""
    return [b.sim for b in env.batches] if hasattr(env, "batches") else [env.sim]


def zeros(env):
    return np.zeros(env.num_envs, np.int64)


def same(a, b):
    """Byte equality of step/reset outputs (tuples of arrays and info dicts)."""
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


@contextmanager
def deadline(env, seconds=20.0):
    """Fail (never hang) if the block runs past ``seconds``: its steps are then interrupted."""
    done, expired = threading.Event(), []

    def watch():
        if done.wait(seconds):
            return
        expired.append(True)
        while not done.wait(0.05):
            for sim in sims(env):
                sim.request_interrupt()

    watchdog = threading.Thread(target=watch, daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        watchdog.join()
    assert not expired, f"the block ran past its {seconds} s deadline"


def in_thread(call, *args):
    """Run ``call(*args)`` in a daemon thread; returns the thread and a list for its outcome."""
    outcome = []

    def run():
        try:
            outcome.append(call(*args))
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome
