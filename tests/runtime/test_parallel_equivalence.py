"""Serial equivalence of the parallel executor, compared byte for byte."""

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import seer_env

THREADS = (1, 2, 3, 4, 8, 16)


def digests_per_step(config, seed, steps, executor, threads):
    sim = seer_env.Simulation("phold", config, executor=executor, num_threads=threads)
    sim.reset(seed)
    out = [sim.digest()]
    dt = config.get("dt", 1.0)
    for k in range(1, steps + 1):
        sim.run_until(k * dt)
        out.append(sim.digest())
    return out, sim


phold_configs = st.fixed_dictionaries(
    {
        "num_entities": st.integers(1, 300),
        "population": st.integers(1, 4),
        "remote": st.floats(0.0, 1.0),
        "mean": st.floats(0.0, 3.0),
        "lookahead": st.floats(0.01, 2.0),
        "dt": st.floats(0.05, 3.0),
        "work": st.integers(0, 50),
        "hot_fraction": st.floats(0.0, 1.0),
        "hot_work": st.integers(0, 200),
    }
)


def assert_equal_to_serial(config, seed, executor, threads, steps=6):
    expected, serial = digests_per_step(config, seed, steps, "serial", 1)
    got, other = digests_per_step(config, seed, steps, executor, threads)
    assert got == expected
    assert other.events_processed == serial.events_processed
    assert other.pending_events()["seq"].tobytes() == serial.pending_events()["seq"].tobytes()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=phold_configs, seed=st.integers(0, 2**64 - 1), threads=st.sampled_from(THREADS))
def test_parallel_digest_equals_serial_after_every_step(config, seed, threads):
    assert_equal_to_serial(config, seed, "parallel", threads)


BASELINES = [name for name in seer_env.executor_names() if name not in ("serial", "parallel")]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=phold_configs,
    seed=st.integers(0, 2**64 - 1),
    threads=st.sampled_from((1, 2, 3, 4, 8)),
    executor=st.sampled_from(BASELINES),
)
def test_baseline_executors_digest_equals_serial(config, seed, threads, executor):
    assert_equal_to_serial(config, seed, executor, threads)


@pytest.mark.parametrize("executor", ["parallel", "barrier"])
@pytest.mark.parametrize("threads", THREADS)
def test_small_lookahead_takes_many_rounds_and_stays_equal(executor, threads):
    config = dict(num_entities=200, population=2, remote=0.5, mean=0.05, lookahead=0.01, dt=1.0)
    expected, _ = digests_per_step(config, 5, 5, "serial", 1)
    sim = seer_env.Simulation("phold", config, executor=executor, num_threads=threads)
    sim.reset(5)
    got, steps = [sim.digest()], []
    for k in range(1, 6):
        sim.run_until(float(k))
        got.append(sim.digest())
        steps.append(dict(sim.last_step))
    assert got == expected
    # The first step runs on the whole pool (the adaptive pool sheds threads only
    # after several stalled steps), so the round machinery is exercised.
    assert steps[0]["threads"] == threads
    for last in steps:
        if executor == "parallel" and "1 thread: serial loop" in last["thread_decision"]:
            # A pool of one, or a shed a stalled probe confirmed on a busy machine,
            # runs the serial event loop: one pass, no rounds.
            assert last["threads"] == 1 and last["rounds"] == 1
        else:
            # Rounds: on the pool, or on one thread after a tentative shed.
            assert threads > 1 or executor != "parallel"
            assert last["rounds"] > 20  # L << dt: many horizon rounds per step


@pytest.mark.parametrize("threads", (1, 2, 4))
def test_large_lookahead_is_one_round_per_step(threads):
    config = dict(num_entities=64, population=1, lookahead=2.0, mean=1.0, dt=1.0)
    _, sim = digests_per_step(config, 1, 4, "parallel", threads)
    assert sim.last_step["rounds"] == 1


def test_switching_executor_mid_run_keeps_the_trajectory():
    config = dict(num_entities=128, population=2, remote=0.3)
    expected, _ = digests_per_step(config, 9, 8, "serial", 1)
    sim = seer_env.Simulation("phold", config)
    sim.reset(9)
    got = [sim.digest()]
    for k in range(1, 9):
        sim.set_executor(seer_env.executor_names()[k % 4], 1 + k % 4)
        sim.run_until(float(k))
        got.append(sim.digest())
    assert got == expected


def test_save_on_parallel_load_on_serial():
    config = dict(num_entities=100, population=3, remote=0.4)
    a = seer_env.Simulation("phold", config, executor="parallel", num_threads=3)
    a.reset(2)
    a.run_until(5.0)
    b = seer_env.Simulation("phold", config)
    b.load(a.save())
    a.run_until(10.0)
    b.run_until(10.0)
    assert a.digest() == b.digest()


def test_many_envs_and_threads_come_and_go():
    # Pools are created lazily and joined on destruction; nothing leaks or hangs.
    for i in range(30):
        sim = seer_env.Simulation(
            "phold", dict(num_entities=32), executor="parallel", num_threads=1 + i % 4
        )
        sim.reset(i)
        sim.run_until(3.0)
        del sim


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_rebuilds_its_pool():
    code = r"""
import os, seer_env
cfg = dict(num_entities=256, population=2, remote=0.5)
sim = seer_env.Simulation('phold', cfg, executor='parallel', num_threads=3)
sim.reset(1); sim.run_until(3.0)          # the parent's pool is running
pid = os.fork()
if pid == 0:
    sim.run_until(6.0)                    # the child starts its own workers
    ref = seer_env.Simulation('phold', cfg); ref.reset(1); ref.run_until(6.0)
    os._exit(0 if sim.digest() == ref.digest() else 3)
_, status = os.waitpid(pid, 0)
sim.run_until(6.0)
ref = seer_env.Simulation('phold', cfg); ref.reset(1); ref.run_until(6.0)
assert sim.digest() == ref.digest()
raise SystemExit(os.waitstatus_to_exitcode(status))
"""
    result = subprocess.run([sys.executable, "-c", code], timeout=60, capture_output=True)
    assert result.returncode == 0, result.stderr.decode()


def test_interpreter_exit_with_live_parallel_env_does_not_hang():
    code = (
        "import seer_env; s = seer_env.Simulation('phold', dict(num_entities=64), "
        "executor='parallel', num_threads=4); s.reset(0); s.run_until(2.0)"
    )
    subprocess.run([sys.executable, "-c", code], timeout=30, check=True)
