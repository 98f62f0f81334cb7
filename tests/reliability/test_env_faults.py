"""Faults at the env level: failing handlers, budgets, contract breaches,
Ctrl-C during a long step, interpreter exit, fork, and memory over many cycles.

Every fault leaves the env refusing to step until reset(); after reset() it is
byte-identical to a fresh env.
"""

import os
import pickle
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from executor_cases import executor_configs

import seer_env
from seer_env import vector
from seer_env.env import SeerParallelEnv
from seer_env.envs import pcs_v0

EXECUTORS = [("serial", 1), ("parallel", 1), ("parallel", 4), ("locked", 3), ("barrier", 3)]


def faulty_env(mode, executor="serial", num_threads=1, check=False, **config):
    cfg = dict(num_entities=8, num_agents=4, mode=mode, culprit=3, fail_after=2.0)
    cfg.update(config)
    return SeerParallelEnv(
        "faulty",
        cfg,
        executor=executor,
        num_threads=num_threads,
        check=check,
        seed=0,
        event_budget=10_000,  # mode 7's cascade; the other modes handle ~100 events a step
    )


def zeros(env):
    return {a: 0 for a in env.agents}


def assert_needs_reset_then_recovers(env, fresh):
    """After a fault: step refuses; reset() gives what a fresh env gives."""
    with pytest.raises(RuntimeError, match=r"after a failed step; call reset\(\) first"):
        env.step(zeros(env))
    obs, _ = env.reset(seed=11)
    ref, _ = fresh.reset(seed=11)
    assert all(obs[a].tobytes() == ref[a].tobytes() for a in ref)
    assert env.sim.digest() == fresh.sim.digest()
    env.step(zeros(env))  # before fail_after: works again
    fresh.step(zeros(fresh))
    assert env.sim.digest() == fresh.sim.digest()


# -- faults raised by the model ------------------------------------------------------------------
@pytest.mark.parametrize("executor,num_threads", executor_configs(4))
def test_handler_exception_on_worker_threads(executor, num_threads):
    env = faulty_env(5, executor, num_threads)
    env.reset(seed=0)
    env.step(zeros(env))  # [0, 1): fine
    env.step(zeros(env))  # [1, 2): fine
    with pytest.raises(seer_env.HandlerError, match="deliberate failure") as info:
        env.step(zeros(env))
    assert info.value.entity == 3 and info.value.time >= 2.0
    assert "entity 3" in str(info.value)
    assert_needs_reset_then_recovers(env, faulty_env(5, executor, num_threads))


@pytest.mark.parametrize("executor,num_threads", EXECUTORS)
def test_event_budget_at_env_level(executor, num_threads):
    env = faulty_env(7, executor, num_threads)
    env.reset(seed=0)
    with pytest.raises(seer_env.EventBudgetExceeded, match="more than 10000 events"):
        for _ in range(5):
            env.step(zeros(env))
    assert_needs_reset_then_recovers(env, faulty_env(7, executor, num_threads))


@pytest.mark.parametrize("executor,num_threads", EXECUTORS)
@pytest.mark.parametrize(
    "mode,match",
    [
        (1, r"before now \+ lookahead"),
        (2, r"before now"),  # into the past
        (3, r"not an entity"),
        (4, r"not finite"),
    ],
)
def test_contract_violation_mid_step_names_the_culprit(mode, match, executor, num_threads):
    env = faulty_env(mode, executor, num_threads, check=True)
    env.reset(seed=0)
    env.step(zeros(env))
    env.step(zeros(env))
    with pytest.raises(seer_env.ContractViolation, match=match) as info:
        env.step(zeros(env))  # the breach happens in the middle of [2, 3)
    assert info.value.entity == 3 and info.value.kind in ("TOKEN", "TICK")
    assert "entity 3 handling" in str(info.value)
    assert 2.0 <= info.value.time < 3.0
    assert_needs_reset_then_recovers(env, faulty_env(mode, executor, num_threads, check=True))


@pytest.mark.parametrize("executor", ["serial", "parallel", "locked", "barrier"])
def test_checked_mode_catches_foreign_writes_at_env_level(executor):
    # The write check needs one handler at a time: every executor with 1 thread.
    env = faulty_env(6, executor, 1, check=True)
    env.reset(seed=0)
    env.step(zeros(env))
    env.step(zeros(env))
    with pytest.raises(seer_env.ContractViolation, match="entity 3 .* wrote the state of entity 4"):
        env.step(zeros(env))
    assert_needs_reset_then_recovers(env, faulty_env(6, executor, 1, check=True))
    unchecked = faulty_env(6, executor, 1, check=False)
    unchecked.reset(seed=0)
    for _ in range(4):  # unchecked, the breach goes unnoticed (documented)
        unchecked.step(zeros(unchecked))


def test_env_level_faults_survive_pickling():
    env = faulty_env(5)
    env.reset(seed=0)
    env.step(zeros(env))
    clone = pickle.loads(pickle.dumps(env))
    for e in (env, clone):
        e.step(zeros(e))
        with pytest.raises(seer_env.HandlerError):
            e.step(zeros(e))
    # A failed env pickles too: the clone needs a reset like the original.
    clone = pickle.loads(pickle.dumps(env))
    with pytest.raises(RuntimeError):
        clone.step(zeros(clone))
    clone.reset(seed=0)
    clone.step(zeros(clone))


# -- Ctrl-C during a long step ---------------------------------------------------------------------
def long_env(executor, num_threads):
    """A pcs env whose every step handles ~1e9 events (minutes): only an interrupt ends it."""
    return pcs_v0.parallel_env(
        width=4,
        height=4,
        phones_per_cell=4,
        step_minutes=1e10,
        event_budget=0,
        executor=executor,
        num_threads=num_threads,
        seed=0,
    )


def other_threads_running():
    """Threads of this process other than the caller in state R (running)."""
    me = threading.get_native_id()
    running = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):  # the thread exited meanwhile
            continue
        if int(tid) != me and state == "R":
            running.append(int(tid))
    return running


def interrupt_after(delay, action):
    """Run action() after delay seconds on a timer thread; returns the send time list."""
    sent = []

    def fire():
        sent.append(time.perf_counter())
        action()

    timer = threading.Timer(delay, fire)
    timer.start()
    return sent, timer


@pytest.mark.parametrize("executor,num_threads", EXECUTORS)
def test_sigint_stops_a_long_step_within_milliseconds(executor, num_threads):
    env = long_env(executor, num_threads)
    env.reset()
    sent, timer = interrupt_after(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    # A safety net: if SIGINT did not stop the step, stop it anyway (and fail).
    backstop, backstop_timer = interrupt_after(20.0, env.sim.request_interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            env.step(zeros(env))
        latency = time.perf_counter() - sent[0]
    finally:
        backstop_timer.cancel()
        timer.join()
    assert not backstop, "SIGINT did not stop the step"
    assert latency < 0.5, f"the step took {latency * 1e3:.0f} ms to stop"  # ~1-20 ms measured
    # The env needs a reset; no thread keeps running.
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(zeros(env))
    deadline = time.monotonic() + 2.0
    while other_threads_running() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert other_threads_running() == []
    # After reset it is exactly a fresh env.
    fresh = long_env(executor, num_threads)
    obs, _ = env.reset(seed=4)
    ref, _ = fresh.reset(seed=4)
    assert env.sim.digest() == fresh.sim.digest()
    assert all(obs[a].tobytes() == ref[a].tobytes() for a in ref)


def test_sigint_goes_to_a_custom_python_handler():
    caught = []
    previous = signal.signal(signal.SIGINT, lambda sig, frame: caught.append(sig))
    try:
        env = long_env("parallel", 2)
        env.reset()
        interrupt_after(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
        # The handler did not raise, but the step stopped: KeyboardInterrupt says so.
        with pytest.raises(KeyboardInterrupt, match="interrupted: the step stopped"):
            env.step(zeros(env))
        assert caught == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)
    assert signal.getsignal(signal.SIGINT) is previous  # our C handler is gone again


def test_request_interrupt_from_another_thread_and_vector_env():
    env = long_env("barrier", 2)
    env.reset()
    interrupt_after(0.1, env.sim.request_interrupt)
    with pytest.raises(KeyboardInterrupt, match="interrupted"):
        env.step(zeros(env))
    venv = vector.make(
        "pcs_v0",
        num_envs=2,
        width=2,
        height=2,
        step_minutes=1e10,
        event_budget=0,
        executor="parallel",
        num_threads=2,
    )
    venv.reset(seed=0)
    sent, _ = interrupt_after(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        venv.step(np.zeros(8, np.int64))
    assert sorted(venv.sim.failed_instances) == [0, 1]  # both autoreset next step


def test_interrupt_during_reset_of_a_huge_env():
    sim = seer_env.Simulation("phold", {"num_entities": 1 << 18, "population": 16})
    interrupt_after(0.05, sim.request_interrupt)
    try:
        sim.reset(0)  # 4M initial events: about a second
    except KeyboardInterrupt:
        assert sim.needs_reset
    small = seer_env.Simulation("phold", {"num_entities": 64})
    small.reset(0)
    small.run_until(1.0)


# -- interpreter exit, fork ------------------------------------------------------------------------
EXIT_SCRIPT = textwrap.dedent(
    """
    import threading, time
    import numpy as np
    import seer_env
    import seer_env.vector
    from seer_env.envs import aircraft_v0, pcs_v0

    seer_env._core._register_comparison_executors()  # locked, barrier: the tests' and bench's
    envs = [pcs_v0.parallel_env(width=8, height=8, executor=ex, num_threads=3, seed=0)
            for ex in ("parallel", "locked", "barrier")]
    envs.append(aircraft_v0.parallel_env(num_uavs=16, executor="parallel", num_threads=2))
    for env in envs:
        env.reset(seed=0)
        env.step({a: env.action_space(a).sample() for a in env.agents})
    venv = seer_env.vector.make("pcs_v0", num_envs=3, width=4, height=4,
                                executor="parallel", num_threads=2)
    venv.reset(seed=0)
    venv.step(np.zeros(48, np.int64))
    # A daemon thread in the middle of a step that would take minutes.
    long = pcs_v0.parallel_env(width=4, height=4, step_minutes=1e10, event_budget=0,
                               executor="parallel", num_threads=2, seed=0)
    long.reset()
    threading.Thread(target=lambda: long.step({a: 0 for a in long.agents}), daemon=True).start()
    time.sleep(0.3)
    print("exiting", flush=True)
    """
)


@pytest.mark.parametrize("how", ["return", "sys.exit", "exception"])
def test_interpreter_exit_with_live_envs_and_threads(how):
    ending = {"return": "", "sys.exit": "import sys; sys.exit(3)", "exception": "raise SystemError"}
    expected_rc = {"return": 0, "sys.exit": 3, "exception": 1}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT + ending[how]],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "exiting" in proc.stdout, proc.stderr
    assert proc.returncode == expected_rc[how], proc.stderr  # no crash (a signal: rc < 0)
    assert time.monotonic() - started < 30  # no hang
    assert "Fatal" not in proc.stderr and "terminate" not in proc.stderr


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # 3.12+: fork with threads
@pytest.mark.parametrize("executor,num_threads", [("parallel", 2), ("barrier", 2), ("locked", 2)])
def test_fork_in_the_middle_of_an_episode(executor, num_threads):
    env = pcs_v0.parallel_env(width=6, height=6, executor=executor, num_threads=num_threads)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    plan = [{a: int(rng.integers(0, 11)) for a in env.possible_agents} for _ in range(6)]
    for actions in plan[:3]:
        env.step(actions)  # workers are running now
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: continue the episode on fresh workers
        try:
            outs = [env.step(actions) for actions in plan[3:]]
            payload = pickle.dumps((outs, env.sim.digest()))
            os.write(write_end, len(payload).to_bytes(8, "little") + payload)
        finally:
            os._exit(0)
    os.close(write_end)
    # The parent is unharmed: it continues the same episode.
    outs = [env.step(actions) for actions in plan[3:]]
    digest = env.sim.digest()
    ready, _, _ = select.select([read_end], [], [], 60)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    data = b""
    while chunk := os.read(read_end, 1 << 20):
        data += chunk
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    child_outs, child_digest = pickle.loads(data[8:])
    assert child_digest == digest
    for got, want in zip(child_outs, outs):
        assert pickle.dumps(got) == pickle.dumps(want)
    env.step(plan[0])  # and the parent keeps going


# -- memory over many cycles -----------------------------------------------------------------------
def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="ASan's quarantine keeps freed memory: RSS grows by design (make asan-python)",
)
@pytest.mark.parametrize(
    "executor,num_threads,cycles", [("serial", 1, 10_000), ("parallel", 2, 1_000)]
)
def test_many_reset_step_cycles_keep_memory_stable(executor, num_threads, cycles):
    env = pcs_v0.parallel_env(
        width=1,
        height=2,
        phones_per_cell=2,
        executor=executor,
        num_threads=num_threads,
        max_cycles=10**6,
    )
    actions = {a: 1 for a in env.possible_agents}
    arrays = np.ones(2, np.int64)

    def cycle(i):
        env.reset(seed=i)
        env.step(actions)
        env.step_arrays(arrays)

    for i in range(cycles // 10):  # warm-up: pools, caches, allocator arenas
        cycle(i)
    before = rss_bytes()
    for i in range(cycles):
        cycle(i)
    growth = rss_bytes() - before
    # A leak of one event (96 B) per cycle would show as ~1 MB at 10,000 cycles.
    assert growth < 512 * 1024, f"RSS grew by {growth / 1024:.0f} KiB over {cycles} cycles"
