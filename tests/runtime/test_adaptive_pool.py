"""env.runtime reports the threads the last step ran on and why (the adaptive pool).

The shedding itself (a stalled worker makes the env step on fewer threads, with
outputs equal to serial) is tested in C++: cpp/tests/test_adaptive_pool.cpp.
"""

import seer_env


def _run(executor: str, num_threads: int, steps: int = 3):
    env = seer_env.make("pcs_v0", width=8, height=8, executor=executor, num_threads=num_threads)
    env.reset(seed=3)
    assert env.runtime.threads_used == 0  # no step yet
    for _ in range(steps):
        env.step({a: 0 for a in env.agents})
    return env


def test_parallel_reports_threads_used_and_decision():
    runtime = _run("parallel", 2).runtime
    assert runtime.num_threads == 2
    assert runtime.threads_used in (1, 2)
    assert isinstance(runtime.thread_decision, str) and runtime.thread_decision
    last = _run("parallel", 2).sim.last_step
    assert last["threads"] in (1, 2) and last["parked_waits"] >= 0


def test_fixed_executors_report_their_threads_and_no_decision():
    serial = _run("serial", 1).runtime
    assert serial.threads_used == 1 and serial.thread_decision == ""
    barrier = _run("barrier", 2).runtime
    assert barrier.threads_used == 2 and barrier.thread_decision == ""
