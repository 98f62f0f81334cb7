"""Pickling and fork: what SuperSuit, RLlib and Gymnasium's AsyncVectorEnv do to an env.

Each env is built, reset and stepped in the parent with the parallel executor
first, so its thread pool is running when the process forks: the child must
rebuild it (never deadlock) and continue exactly where the parent was, and
the parent must be unharmed.
"""

import multiprocessing as mp
import os
import pickle
import select
import signal

import cloudpickle
import pytest
from envcases import ENV_NAMES, make, trace

# Python >= 3.12 warns when forking a process that has threads (ours has the
# pool's workers): forking such a process is exactly what is tested here.
pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")

TIMEOUT = 60  # seconds: a child that takes longer is deadlocked


def started_env(name, threads=2):
    env = make(name, max_cycles=15, executor="parallel", num_threads=threads)
    trace(env, 6, seed=4)  # the pool has run: its workers exist in the parent
    return env


def continue_trace(env):
    return trace(env, 20, reset=False, action_seed=9)


def run_in_forked_child(fn):
    """``fn()`` in an ``os.fork()`` child; returns its result (or raises on hang/crash)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(read_fd)
            payload = pickle.dumps(fn())
            with os.fdopen(write_fd, "wb") as f:
                f.write(payload)
        except BaseException:  # noqa: BLE001 - report any failure through the exit code
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks = []
    with os.fdopen(read_fd, "rb") as f:
        while True:
            ready, _, _ = select.select([f], [], [], TIMEOUT)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail(f"forked child hung for {TIMEOUT} s (deadlock after fork?)")
            chunk = os.read(f.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "forked child failed"
    return pickle.loads(b"".join(chunks))


@pytest.mark.parametrize("name", ENV_NAMES)
def test_os_fork_child_continues_and_parent_is_unharmed(name):
    env = started_env(name)
    reference = cloudpickle.loads(cloudpickle.dumps(env))  # same state, separate pool
    expected = continue_trace(reference)
    assert run_in_forked_child(lambda: continue_trace(env)) == expected
    # the parent's env (and its pool) still works and was not advanced by the child
    assert continue_trace(env) == expected


@pytest.mark.parametrize("name", ENV_NAMES)
def test_fork_of_a_forked_child(name):
    env = started_env(name)
    expected = continue_trace(cloudpickle.loads(cloudpickle.dumps(env)))

    def child():
        mine = trace(env, 3, reset=False, action_seed=1)  # child rebuilds its pool
        grandchild = run_in_forked_child(lambda: continue_trace(env))
        return mine, grandchild

    mine, grandchild = run_in_forked_child(child)
    clone = cloudpickle.loads(cloudpickle.dumps(env))
    assert mine == trace(clone, 3, reset=False, action_seed=1)
    assert grandchild == continue_trace(clone)
    assert continue_trace(env) == expected


def _child_trace(env, queue):
    queue.put(continue_trace(env))


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
@pytest.mark.parametrize("name", ENV_NAMES)
def test_multiprocessing_process_steps_the_env(name, context):
    """fork: the env is inherited; spawn/forkserver: it is pickled to the child."""
    env = started_env(name)
    expected = continue_trace(cloudpickle.loads(cloudpickle.dumps(env)))
    ctx = mp.get_context(context)
    queue = ctx.Queue()
    proc = ctx.Process(target=_child_trace, args=(env, queue))
    proc.start()
    try:
        result = queue.get(timeout=TIMEOUT)
    finally:
        proc.join(TIMEOUT)
        if proc.is_alive():
            proc.kill()
    assert proc.exitcode == 0
    assert result == expected
    assert continue_trace(env) == expected


@pytest.mark.parametrize("name", ENV_NAMES)
def test_fork_pool_map_over_one_env(name):
    """A fork Pool: every worker inherits the same env and gets the same result."""
    global _POOL_ENV
    _POOL_ENV = started_env(name)
    expected = continue_trace(cloudpickle.loads(cloudpickle.dumps(_POOL_ENV)))
    with mp.get_context("fork").Pool(2) as pool:
        results = pool.map_async(_pool_task, range(4)).get(TIMEOUT)
    assert results == [expected] * 4
    assert continue_trace(_POOL_ENV) == expected


_POOL_ENV = None


def _pool_task(_):
    # each task continues from the state inherited at fork (clone: tasks share a worker)
    return continue_trace(cloudpickle.loads(cloudpickle.dumps(_POOL_ENV)))


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("when", ["before_reset", "mid_episode", "episode_over"])
def test_cloudpickle_round_trip(name, when):
    env = make(name, max_cycles=5, seed=11, executor="parallel", num_threads=2)
    if when == "mid_episode":
        trace(env, 3)
    elif when == "episode_over":
        trace(env, 5)
        assert env.agents == []
    clone = cloudpickle.loads(cloudpickle.dumps(env))
    assert clone.agents == env.agents
    # the same outputs from here on, through unseeded resets (the seed sequence pickles too)
    assert trace(clone, 12, reset=when == "before_reset") == trace(
        env, 12, reset=when == "before_reset"
    )
