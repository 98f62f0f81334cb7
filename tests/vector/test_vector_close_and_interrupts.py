"""Vector envs under close-during-step, Ctrl-C, failures and fork: refused or consistent.

Consistent means: a later reset/step returns the bytes of a SeerVectorEnv that
made the same completed calls. Every background step here has a deadline.
"""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from vector_cases import LONG, SMALL, deadline, in_thread, make, same, sims, wait_until, zeros

import seer_env

KINDS = ["sync", "async"]


@pytest.mark.parametrize("kind", KINDS)
def test_close_during_another_threads_step_is_refused(kind):
    env = make(kind, **LONG)
    env.reset(seed=0)
    with deadline(env):
        thread, outcome = in_thread(env.step, zeros(env))
        wait_until(lambda: all(sim.busy for sim in sims(env)))
        for call in (env.close, env.reset, lambda: env.step(zeros(env))):
            with pytest.raises(RuntimeError, match="in progress"):
                call()
        assert all(sim.busy for sim in sims(env))  # the refused close cleared nothing
        for sim in sims(env):
            sim.request_interrupt()
        thread.join(10)
    assert isinstance(outcome[0], KeyboardInterrupt)
    env.reset(seed=1)  # usable: every call returned
    env.close()
    assert not any(sim.busy for sim in sims(env))


@pytest.mark.parametrize("kind", KINDS)
def test_close_with_a_step_in_flight_drops_it_and_every_instance_restarts(kind):
    """close() interrupts the step in flight; the next step resets every instance."""
    env, ref = make(kind, **SMALL), make("sync", **SMALL)
    assert same(env.reset(seed=3), ref.reset(seed=3))
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 11, size=(12, env.num_envs))
    assert same(env.step(actions[0]), ref.step(actions[0]))
    env.step_async(actions[1])
    env.close()
    # The model: the dropped step never completed; the instances begin their next episode.
    first = env.step(actions[1])
    obs, infos = ref.reset()
    assert first[0].tobytes() == obs.tobytes()
    assert not first[1].any() and not first[2].any() and not first[3].any()
    for a in actions[2:]:  # crosses truncation (max_cycles 4) and autoreset
        assert same(env.step(a), ref.step(a))
    env.step_async(actions[0])
    env.close()  # a second close after reuse closes again (joins, drops the step)
    assert not any(sim.in_flight for sim in sims(env))
    assert same(env.step(actions[0])[0], ref.reset()[0])


@pytest.mark.parametrize("kind", KINDS)
def test_close_interrupts_a_long_step_in_flight(kind):
    env = make(kind, **LONG)
    env.reset(seed=0)
    with deadline(env):
        env.step_async(zeros(env))
        time.sleep(0.1)
        start = time.monotonic()
        env.close()
        assert time.monotonic() - start < 5.0
    assert not any(sim.in_flight or sim.busy for sim in sims(env))
    env.reset(seed=0)
    env.close()


def test_del_interrupts_a_long_step_in_flight():
    env = make("sync", **LONG)
    env.reset(seed=0)
    env.step_async(zeros(env))
    time.sleep(0.1)
    sim = env.sim
    timer = threading.Timer(10.0, sim.request_interrupt)  # the deadline
    timer.start()
    start = time.monotonic()
    del env
    elapsed = time.monotonic() - start
    timer.cancel()
    assert elapsed < 5.0
    assert not sim.in_flight


def test_a_failed_step_keeps_the_bookkeeping_of_the_instances_that_completed():
    """Instance 1 exceeds the event budget in step 1; instance 0 completes and is counted."""
    cfg = dict(SMALL, max_cycles=2)
    env, ref = make("sync", 2, event_budget=12, **cfg), make("sync", 2, **cfg)
    env.reset(seed=[3, 1])  # 8 and 19 events in step 1: instance 1 alone fails
    ref.reset(seed=[3, 1])
    z = zeros(env)
    with pytest.raises(seer_env.EventBudgetExceeded, match="^instance 1: ") as info:
        env.step(z)
    assert info.value.instance == 1
    ref.step(z)
    obs, rew, term, trunc, _ = env.step(z)  # instance 0: its step 2, truncated (max_cycles 2)
    expected = ref.step(z)
    rows = slice(0, env.agents_per_instance)
    for got, want in zip((obs, rew, term, trunc), expected):
        assert got[rows].tobytes() == want[rows].tobytes()
    assert trunc[rows].all()
    assert not rew[env.agents_per_instance :].any()  # instance 1 autoreset


@pytest.mark.parametrize("call", ["step", "step_wait"])
def test_sigint_during_an_async_step_interrupts_every_batch(call):
    env = make("async", **LONG)
    env.reset(seed=0)
    main = threading.get_ident()
    assert main == threading.main_thread().ident
    sigint = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    with deadline(env):
        sigint.start()
        with pytest.raises(KeyboardInterrupt):
            if call == "step":
                env.step(zeros(env))
            else:
                env.step_async(zeros(env))
                env.step_wait()
        sigint.join()
    # Every batch stopped: nothing in flight, every instance autoresets.
    assert not any(sim.in_flight or sim.busy for sim in sims(env))
    assert all(batch._autoreset.all() for batch in env.batches)
    assert same(env.reset(seed=5), make("sync", **LONG).reset(seed=5))
    with deadline(env):
        start = time.monotonic()
        env.close()
        assert time.monotonic() - start < 5.0


FORK_WITH_STEP_IN_FLIGHT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    sys.path.insert(0, {support!r})
    from vector_cases import SMALL, make, same, zeros

    env, ref = make({kind!r}, **SMALL), make("sync", **SMALL)
    env.reset(seed=2), ref.reset(seed=2)
    env.step(zeros(env)), ref.step(zeros(ref))
    env.step_async(zeros(env))
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            try:
                env.step_wait()
            except RuntimeError as exc:
                assert "forked" in str(exc), exc
                got = env.step(zeros(env))  # every instance restarts
                assert same(got[0], ref.reset()[0])
                assert same(env.step(zeros(env)), ref.step(zeros(ref)))
                code = 0
        finally:
            os._exit(code)
    expected = ref.step(zeros(ref))
    assert same(env.step_wait(), expected)  # the parent is unharmed
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0, status
    print("ok")
    """
)


def run_fork_script(template: str, kind: str) -> None:
    """Runs a fork scenario in a fresh interpreter; it prints "ok" when every check held."""
    support = os.path.join(os.path.dirname(__file__), "..", "support")
    script = template.format(support=os.path.abspath(support), kind=kind)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_fork_with_a_step_async_in_flight(kind):
    run_fork_script(FORK_WITH_STEP_IN_FLIGHT, kind)


FORK_DURING_ANOTHER_THREADS_STEP = textwrap.dedent(
    """
    import os, sys, threading
    sys.path.insert(0, {support!r})
    from vector_cases import LONG, SMALL, in_thread, make, same, sims, wait_until, zeros

    env = make({kind!r}, **LONG)
    env.reset(seed=2)
    thread, outcome = in_thread(env.step, zeros(env))
    wait_until(lambda: all(sim.busy for sim in sims(env)))
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            # The step never returns here: the env is not left "in progress".
            assert same(env.reset(seed=3), make("sync", **LONG).reset(seed=3))
            code = 0
        finally:
            os._exit(code)
    for sim in sims(env):
        sim.request_interrupt()
    thread.join(10)
    assert isinstance(outcome[0], KeyboardInterrupt), outcome
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0, status
    print("ok")
    """
)


@pytest.mark.parametrize("kind", KINDS)
def test_fork_while_another_thread_is_inside_a_step(kind):
    run_fork_script(FORK_DURING_ANOTHER_THREADS_STEP, kind)


EXIT_WITH_STEP_IN_FLIGHT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {support!r})
    from vector_cases import LONG, make, zeros

    env = make({kind!r}, **LONG)
    env.reset(seed=0)
    env.step_async(zeros(env))
    time.sleep(0.1)
    if {how!r} == "raise":
        raise SystemExit(3)
    """
)


@pytest.mark.parametrize("how", ["return", "raise"])
@pytest.mark.parametrize("kind", KINDS)
def test_interpreter_exit_with_a_long_step_async_in_flight(kind, how):
    support = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "support"))
    script = EXIT_WITH_STEP_IN_FLIGHT.format(support=support, kind=kind, how=how)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == (3 if how == "raise" else 0), proc.stderr
