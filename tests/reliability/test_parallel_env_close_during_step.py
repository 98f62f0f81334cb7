"""SeerParallelEnv with a step running in another thread: close() and del.

The env has no background step of its own: a step runs in the caller's
thread, which holds the env until the step returns. close() from another
thread is refused (it would join the workers mid-step) and changes nothing;
del only drops a reference. Each case runs in a child with a timeout.
"""

import subprocess
import sys
import textwrap

import pytest

SCRIPT = """
import threading, time
from seer_env.envs import pcs_v0

env = pcs_v0.parallel_env(width=4, height=4, step_minutes=1e10, event_budget=0,
                          executor="parallel", num_threads=2, seed=0)
env.reset(seed=0)
sim = env.sim
outcome = []
def run():
    try:
        env.step({a: 0 for a in env.agents})
    except KeyboardInterrupt:
        outcome.append("interrupted")
stepper = threading.Thread(target=run)
stepper.start()
time.sleep(0.3)
try:
    env.close()
    print("close returned", flush=True)
except RuntimeError as e:
    assert "in progress" in str(e), e
    print("close refused", flush=True)
assert sim.busy  # the step goes on
started = time.monotonic()
del env  # the stepping thread still holds it: nothing to wait for
assert time.monotonic() - started < 1
sim.request_interrupt()
stepper.join(10)
assert outcome == ["interrupted"], outcome
assert sim.needs_reset
sim.reset(1)
print("done", flush=True)
"""


def test_close_during_another_threads_step_is_refused_and_del_does_not_wait():
    try:
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(SCRIPT)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("close() or del waited for the step")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "close refused" in proc.stdout and "done" in proc.stdout, proc.stdout
