"""The vector env's background step (``step_async``) across faults, fork, close, del and exit.

Each case runs in a child interpreter with a timeout: before these fixes a
failed thread start left signals blocked, close() and del waited forever for
the step, close() cleared another thread's busy flag and a forked child's
step_wait() returned a torn step. (Exit with a step in flight did not hang on
the machine tested: the cases guard the atexit handler that now interrupts
it.) LONG is a step only an interrupt ends (``step_minutes=1e10, event_budget=0``).
"""

import os
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import gc, os, resource, signal, sys, threading, time
import numpy as np
import seer_env
from seer_env import _core

LONG = {"width": 4, "height": 4, "step_minutes": 1e10}  # with event_budget=0
SHORT = {"width": 4, "height": 4}

def vector(config, num_envs=2, **options):
    return _core.VectorSimulation("pcs", config, num_envs, **options)

def zeros(vec):
    return np.zeros(vec.num_envs * vec.spec["num_agents"], np.int64)

RESET, STEP = np.full(2, 1, np.uint8), np.zeros(2, np.uint8)
SEEDS = np.arange(2, dtype=np.uint64)

def start(vec):
    vec.step(zeros(vec), None, RESET, SEEDS)
    vec.step_async(zeros(vec), None, STEP, SEEDS)

def tasks():
    return len(os.listdir("/proc/self/task"))

def tasks_at_most(n):
    # A joined thread can stay listed in /proc for a moment (the kernel reaps
    # it after join returns; ~1 ms here): wait up to 1 s for it to go.
    deadline = time.monotonic() + 1.0
    while tasks() > n and time.monotonic() < deadline:
        time.sleep(0.001)
    return tasks() <= n
"""


def run_child(body, timeout=60):
    """Runs PRELUDE + body in a fresh interpreter; a hang fails the test."""
    script = PRELUDE + textwrap.dedent(body)
    try:
        return subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child hung for {timeout} s")


def assert_ok(proc, *lines):
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    for line in lines:
        assert line in proc.stdout, (proc.stdout, proc.stderr)


# -- a failed start of the background thread -----------------------------------------------------
@pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="ASan reserves terabytes of address space: RLIMIT_AS cannot apply",
)
def test_a_failed_background_thread_start_restores_the_signal_mask_and_recovers():
    proc = run_child(
        """
        def vm_bytes():
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmSize:"):
                        return int(line.split()[1]) * 1024

        vec = vector(SHORT)
        vec.step(zeros(vec), None, RESET, SEEDS)
        baseline = tasks()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + 2 * 2**20, hard))  # < one stack
        try:
            vec.step_async(zeros(vec), None, STEP, SEEDS)
        except (RuntimeError, MemoryError) as e:
            print("refused:", e, flush=True)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set(), "signal mask left blocked"
        assert tasks_at_most(baseline) and tasks() == baseline
        assert not vec.in_flight and not vec.busy
        vec.step_async(zeros(vec), None, STEP, SEEDS)  # with room again: works
        vec.step_wait()
        ref = vector(SHORT)
        ref.step(zeros(ref), None, RESET, SEEDS)
        ref.step(zeros(ref), None, STEP, SEEDS)
        assert vec.digest(0) == ref.digest(0) and vec.digest(1) == ref.digest(1)
        print("recovered", flush=True)
        """
    )
    assert_ok(proc, "refused: could not start the background step thread", "recovered")


# -- fork with a background step in flight -------------------------------------------------------
FORK_MID_BACKGROUND_STEP = """
vec = vector(LONG, executor="{executor}", num_threads={threads}, event_budget=0)
start(vec)
time.sleep(0.1)  # the step is in flight on the background thread
pid = os.fork()
if pid == 0:
    try:
        try:
            vec.step_wait()
            print("child: torn step returned as a success", flush=True)
            os._exit(1)
        except RuntimeError as e:
            assert "forked" in str(e), e
        assert not vec.in_flight and not vec.busy
        assert list(vec.failed_instances) == [0, 1]
        assert vec.needs_reset(0) and vec.needs_reset(1)
        vec.step(zeros(vec), None, RESET, SEEDS + 5)  # reset: a fresh batch runner
        threading.Timer(0.2, vec.request_interrupt).start()
        try:  # the fresh runner's threads run (and stop) in the child
            vec.step(zeros(vec), None, STEP, SEEDS)
        except KeyboardInterrupt:
            pass
        vec.step(zeros(vec), None, RESET, SEEDS + 5)
        fresh = vector(LONG, event_budget=0)
        fresh.step(zeros(fresh), None, RESET, SEEDS + 5)
        assert vec.digest(0) == fresh.digest(0) and vec.digest(1) == fresh.digest(1)
        os._exit(0)
    except BaseException as e:
        print("child failed:", type(e).__name__, e, flush=True)
        os._exit(1)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status), flush=True)
assert vec.in_flight  # the parent's step still runs, on the parent's threads
vec.request_interrupt()
try:
    vec.step_wait()
except KeyboardInterrupt:
    print("parent interrupted", flush=True)
vec.step(zeros(vec), None, RESET, SEEDS)
ref = vector(LONG, event_budget=0)
ref.step(zeros(ref), None, RESET, SEEDS)
assert vec.digest(0) == ref.digest(0) and vec.digest(1) == ref.digest(1)
print("parent fine", flush=True)
"""


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("executor,threads", [("serial", 1), ("parallel", 2)])
def test_a_child_forked_mid_background_step_gets_an_error_and_the_parent_is_unharmed(
    executor, threads
):
    proc = run_child(FORK_MID_BACKGROUND_STEP.format(executor=executor, threads=threads))
    assert_ok(proc, "child exit 0", "parent interrupted", "parent fine")


# -- close, del and exit with a step in flight: interrupted, not waited for ----------------------
def test_close_interrupts_a_long_background_step_and_the_instances_need_reset():
    proc = run_child(
        """
        vec = vector(LONG, event_budget=0, executor="parallel", num_threads=2)
        baseline = tasks()
        start(vec)
        time.sleep(0.2)
        started = time.monotonic()
        vec.close()
        assert time.monotonic() - started < 5, "close() waited for the step"
        assert not vec.in_flight and not vec.busy
        assert list(vec.failed_instances) == [0, 1]
        assert vec.needs_reset(0) and vec.needs_reset(1)
        vec.release_threads()
        assert tasks_at_most(baseline), "a thread outlived close()"
        vec.step(zeros(vec), None, RESET, SEEDS)  # usable again after a reset
        fresh = vector(LONG, event_budget=0)
        fresh.step(zeros(fresh), None, RESET, SEEDS)
        assert vec.digest(0) == fresh.digest(0)
        print("closed", flush=True)
        """
    )
    assert_ok(proc, "closed")


def test_close_skips_instances_the_background_step_did_not_touch():
    proc = run_child(
        """
        vec = vector(LONG, event_budget=0)
        vec.step(zeros(vec), None, RESET, SEEDS)
        vec.step_async(zeros(vec), None, np.array([0, 2], np.uint8), SEEDS)  # instance 1 skips
        time.sleep(0.1)
        vec.close()
        assert list(vec.failed_instances) == [0]
        assert vec.needs_reset(0) and not vec.needs_reset(1)
        print("closed", flush=True)
        """
    )
    assert_ok(proc, "closed")


def test_close_while_another_thread_steps_is_refused_and_changes_nothing():
    proc = run_child(
        """
        vec = vector(LONG, event_budget=0)
        vec.step(zeros(vec), None, RESET, SEEDS)
        outcome = []
        def run():
            try:
                vec.step(zeros(vec), None, STEP, SEEDS)
            except KeyboardInterrupt:
                outcome.append("interrupted")
        stepper = threading.Thread(target=run)
        stepper.start()
        time.sleep(0.2)
        try:
            vec.close()
            print("close returned", flush=True)
        except RuntimeError as e:
            assert "in progress" in str(e), e
            print("refused", flush=True)
        assert vec.busy, "close() cleared the busy flag of another thread's step"
        vec.request_interrupt()
        stepper.join(10)
        assert outcome == ["interrupted"], outcome
        print("done", flush=True)
        """
    )
    assert_ok(proc, "refused", "done")


@pytest.mark.parametrize("how", ["del", "gc", "exit", "sys.exit", "exception"])
def test_del_and_exit_interrupt_a_long_background_step(how):
    ending = {
        "del": "del vec\nprint('deleted', flush=True)",
        "gc": "cycle = [vec]\ncycle.append(cycle)\ndel vec, cycle\ngc.collect()\n"
        "print('deleted', flush=True)",
        "exit": "print('exiting', flush=True)",
        "sys.exit": "print('exiting', flush=True)\nsys.exit(3)",
        "exception": "print('exiting', flush=True)\nraise SystemError('bye')",
    }[how]
    body = (
        "vec = vector(LONG, event_budget=0, executor='parallel', num_threads=2)\n"
        "start(vec)\ntime.sleep(0.2)\n"
        # Another Python thread keeps running while the step is dropped (GIL released).
        "ticks = []\nthreading.Thread(target=lambda: [ticks.append(time.sleep(0.01))"
        " for _ in range(10)], daemon=True).start()\n" + ending
    )
    proc = run_child(body, timeout=30)
    expected_rc = {"sys.exit": 3, "exception": 1}.get(how, 0)
    assert proc.returncode == expected_rc, (proc.stdout, proc.stderr)
    assert ("deleted" if how in ("del", "gc") else "exiting") in proc.stdout
    assert "Fatal" not in proc.stderr and "terminate" not in proc.stderr, proc.stderr


def test_close_right_after_step_async_never_misses_the_interrupt():
    """The request made before the background step begins holds (its begin_step()
    clears each instance's own flag): close() at once, many times, never hangs."""
    proc = run_child(
        """
        vec = vector(LONG, event_budget=0, executor="parallel", num_threads=2)
        vec.step(zeros(vec), None, RESET, SEEDS)
        for _ in range(50):
            vec.step_async(zeros(vec), None, STEP, SEEDS)
            vec.close()
            vec.step(zeros(vec), None, RESET, SEEDS)
        print("never missed", flush=True)
        """
    )
    assert_ok(proc, "never missed")
