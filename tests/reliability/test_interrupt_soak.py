"""Real SIGINTs at random times over ~200 calls: every env stays consistent or refuses reset().

A thread sends SIGINT to the main thread (``signal.pthread_kill``) after a
random pause, one at a time: the main thread blocks SIGINT outside the env
calls, so a signal sent between two calls arrives as the next one starts,
and one that arrives as a call returns is raised right after it, both inside
the call's ``try``. Each call is checked by the models of
``interrupt_points`` (the ParallelEnv's dict and array paths, the sync and
the async vector env); at the end every env, reset, matches a fresh one.
"""

import random
import signal
import threading
import time
from contextlib import contextmanager

import numpy as np
from envcases import digest
from interrupt_points import SingleModel, VectorModel, pcs_actions

from seer_env.envs import pcs_v1

CALLS = 200
SECONDS = 8.0  # the loop stops early rather than run longer on a loaded machine


class Sigints:
    """Sends SIGINT to the main thread after random pauses, the next only once one arrived."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.arrived = threading.Event()
        self.stop = threading.Event()
        self.main = threading.main_thread().ident
        self.sent = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.rng.uniform(0.0002, 0.004)):
            signal.pthread_kill(self.main, signal.SIGINT)
            self.sent += 1
            while not self.arrived.wait(0.05):
                if self.stop.is_set():
                    return
            self.arrived.clear()

    def call(self, fn):
        """``fn()`` with SIGINT let in: ``(result, interrupted)``."""
        try:
            try:  # a pending SIGINT is raised as soon as it is unblocked: in here
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
                return fn(), False
            finally:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        except KeyboardInterrupt:
            self.arrived.set()
            return None, True


@contextmanager
def sigints(seed: int):
    sender = Sigints(seed)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    sender.thread.start()
    try:
        yield sender
    finally:
        sender.stop.set()
        sender.thread.join(5)
        try:  # a signal still pending arrives here: the test is over, swallow it
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            time.sleep(0.01)
        except KeyboardInterrupt:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def parallel_env():
    return pcs_v1.parallel_env(
        width=2, height=2, max_cycles=3, check_steps=0, seed=5, executor="parallel", num_threads=2
    )


def single_call(model, rng, arrays):
    """One random call on a SingleModel: (call on an env, made on the env under test)."""
    if not model.shadow.agents or rng.random() < 0.15:
        seed = rng.choice([None, rng.randrange(100)])
        return lambda e: e.reset(seed=seed)
    actions = pcs_actions(model.shadow.agents, model.rng)
    if arrays:
        rows = np.array([actions.get(a, 0) for a in model.env.possible_agents], np.int64)
        return lambda e: e.step_arrays(rows)
    return lambda e: e.step(actions)


def run_single(model, sender, rng, arrays):
    call = single_call(model, rng, arrays)
    out, hit = sender.call(lambda: call(model.env))
    if hit:
        model.check(call)
        return True
    want = call(model.shadow)
    assert digest(out) == digest(want)
    assert model.fingerprint(model.env) == model.fingerprint(model.shadow)
    return False


def run_vector(model, sender, rng):
    before = model.state_before()
    if rng.random() < 0.15:
        seed = rng.randrange(100)
        out, hit = sender.call(lambda: model.env.reset(seed=seed))
        model.settle_reset(seed, before, None if hit else out)
    else:
        actions = model.actions()
        out, hit = sender.call(lambda: model.env.step(actions))
        model.settle_step(actions, before, None if hit else out)
    model.assert_idle()
    if hit:
        model.check(4)
    return hit


def test_random_sigints_leave_every_env_consistent_or_refusing_until_reset():
    rng = random.Random(1)
    singles = [SingleModel(parallel_env), SingleModel(parallel_env)]
    vectors = [VectorModel("sync", 3), VectorModel("async", 4)]
    for model in singles:
        model.prepare(0)
    for model in vectors:
        model.prepare(0)
    hits, calls, start = 0, 0, time.monotonic()
    with sigints(seed=2) as sender:
        while calls < CALLS and time.monotonic() - start < SECONDS:
            which = calls % 4
            if which < 2:
                hits += run_single(singles[which], sender, rng, arrays=which == 1)
            else:
                hits += run_vector(vectors[which - 2], sender, rng)
            calls += 1
    assert calls >= 40 and hits >= 10, f"{calls} calls, {hits} interrupted: too few to mean much"
    # Reset, every env is a fresh env, byte for byte.
    for model in singles:
        fresh = parallel_env()
        assert digest(model.env.reset(seed=99)) == digest(fresh.reset(seed=99))
        actions = dict.fromkeys(fresh.agents, 3)
        assert digest(model.env.step(actions)) == digest(fresh.step(actions))
    for model, kind in zip(vectors, ["sync", "async"]):
        fresh = VectorModel(kind, model.num_instances).env
        got, want = model.env.reset(seed=99), fresh.reset(seed=99)
        assert got[0].tobytes() == want[0].tobytes()
        actions = np.arange(fresh.num_envs) % 11
        got, want = model.env.step(actions), fresh.step(actions)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(got[:4], want[:4]))
        fresh.close()
