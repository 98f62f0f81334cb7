"""Runtime reliability: re-entrant Ctrl-C, thread creation failure,
thread lifetime, hostile plugin capsules, fork during a step, bounded handlers.

Each test here failed before its fix. Tests that can hang or break the
process run in a child with a timeout.
"""

import subprocess
import sys
import textwrap

import pytest
from os_threads import settled_thread_count, threads_of_this_process


def run_child(script, timeout=60, preexec=None):
    """Runs `script` in a fresh interpreter; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec,
    )


# -- 1. Ctrl-C while env calls are nested (a PythonModel handler calling another env) ----------
NESTED_SIGINT = """
import os, signal, sys
import numpy as np
from gymnasium import spaces
import seer_env

inner = seer_env.Simulation("phold", {"num_entities": 16})

class Nester(seer_env.PythonModel):
    state_dtype = np.dtype([("x", "<u8")])
    def __init__(self):
        super().__init__()
        self.num_entities = self.num_agents = 2
        self.lookahead, self.dt = 0.5, 1.0
        self.observation_space = spaces.Box(0, np.inf, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.state_space = None
    def on_action(self, ctx, state, action):
        if ctx.self == 0:
            inner.reset(0)           # a nested env call: its own SIGINT scope
            inner.run_until(1.0)
            if action:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C inside the outer step
    def on_event(self, ctx, state, event):
        pass
    def observe(self, agent, state, snapshot):
        return [0.0]
    def reward(self, agent, state, snapshot):
        return 0.0

env = seer_env.SeerParallelEnv(Nester, {})
env.reset(seed=0)
env.step({a: 0 for a in env.agents})   # nested call, no signal
try:
    env.step({a: 1 for a in env.agents})
except BaseException as e:
    print("raised", type(e).__name__, flush=True)
# Our C handler is gone, Python's is back; a later SIGINT is Python's again.
assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
try:
    os.kill(os.getpid(), signal.SIGINT)
    signal.sigtimedwait  # give Python a bytecode boundary
    for _ in range(1000):
        pass
except KeyboardInterrupt:
    print("plain KeyboardInterrupt", flush=True)
print("done", flush=True)
"""


def test_sigint_during_nested_env_calls_does_not_hang():
    try:
        proc = run_child(NESTED_SIGINT, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("SIGINT during a nested env call hung the process")
    assert proc.returncode == 0, proc.stderr
    assert "raised" in proc.stdout and "KeyboardInterrupt" in proc.stdout, proc.stdout
    assert "plain KeyboardInterrupt" in proc.stdout and "done" in proc.stdout, proc.stdout


# -- 4. thread creation failing (out of address space) -----------------------------------------
THREAD_START_FAILURE = """
import os, resource, signal
import seer_env
from seer_env.envs import pcs_v0

def tasks():
    return len(os.listdir("/proc/self/task"))

def vm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

env = pcs_v0.parallel_env(width=8, height=8, executor="parallel", num_threads=32, seed=0)
baseline = tasks()
# Room for a few 8 MiB thread stacks, not for 31 of them.
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + 64 * 2**20, hard))
try:
    env.reset(seed=0)
except (RuntimeError, MemoryError) as e:
    print("refused:", e, flush=True)
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set(), "signal mask left blocked"
assert tasks() == baseline, f"{tasks() - baseline} partial workers live on"
env.reset(seed=0)  # with room again: works (no spin on missing workers)
env.step({a: 0 for a in env.agents})
ref = pcs_v0.parallel_env(width=8, height=8, seed=0)
ref.reset(seed=0)
ref.step({a: 0 for a in ref.agents})
assert env.sim.digest() == ref.sim.digest()
print("recovered", flush=True)
"""


@pytest.mark.skipif(
    "libasan" in __import__("os").environ.get("LD_PRELOAD", ""),
    reason="ASan reserves terabytes of address space: RLIMIT_AS cannot apply",
)
def test_failed_thread_creation_is_a_clear_error_and_recoverable():
    try:
        proc = run_child(THREAD_START_FAILURE, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the env hung after thread creation failed")
    assert proc.returncode == 0, proc.stderr
    assert "refused: could not start 31 worker threads" in proc.stdout, proc.stdout
    assert "recovered" in proc.stdout


# -- 14. register_plugin with a capsule whose fields are null ----------------------------------
HOSTILE_CAPSULES = """
import ctypes, re
import seer_env

class Abi(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("cxx11_abi", ctypes.c_int32)] + [
        (f"size{i}", ctypes.c_uint32) for i in range(6)]

class Plugin(ctypes.Structure):
    _fields_ = [("abi", Abi), ("compiler", ctypes.c_char_p), ("make", ctypes.c_void_p),
                ("declare", ctypes.c_void_p)]

new_capsule = ctypes.pythonapi.PyCapsule_New
new_capsule.restype = ctypes.py_object
new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

def register(plugin):
    capsule = new_capsule(ctypes.addressof(plugin), b"seer_env.ModelPlugin", None)
    try:
        seer_env.register_cpp_model("hostile", capsule)
    except ValueError as e:
        return str(e)
    return "accepted"

# A wrong ABI and a null compiler string: the message must not read it.
print("A:", register(Plugin(Abi(999, 1, 1, 1, 1, 1, 1, 1), None, None, None)), flush=True)
# This module's ABI (read from the message above), with null function pointers.
msg = register(Plugin(Abi(999, 1, 1, 1, 1, 1, 1, 1), b"cc", None, None))
ours = re.search(r"_core \\(abi v(\\d+), _GLIBCXX_USE_CXX11_ABI=(-?\\d+), "
                 r"sizeof\\(.*?\\)=([\\d/]+)", msg)
abi = Abi(int(ours[1]), int(ours[2]), *map(int, ours[3].split("/")))
print("B:", register(Plugin(abi, b"cc", None, None)), flush=True)
print("C:", register(Plugin(abi, None, None, None)), flush=True)
fake = ctypes.cast(ctypes.CFUNCTYPE(ctypes.c_void_p)(lambda: None), ctypes.c_void_p).value
print("D:", register(Plugin(abi, b"cc", fake, None)), flush=True)
print("E:", register(Plugin(abi, b"cc", None, fake)), flush=True)
assert "hostile" not in seer_env.model_names()
print("done", flush=True)
"""


def test_register_plugin_refuses_capsules_with_null_fields():
    proc = run_child(HOSTILE_CAPSULES, timeout=60)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)  # < 0: killed by a signal
    out = proc.stdout
    assert "A: plugin for model 'hostile' was built with an incompatible C++ ABI" in out, out
    assert "compiler (null)" in out
    for line in ("B", "C", "E"):
        assert f"{line}: plugin for model 'hostile' has a null field (make is null)" in out, out
    assert "D: plugin for model 'hostile' has a null field (declare is null)" in out, out
    assert "done" in out


# -- 3. handlers that loop: configs that cannot make progress are refused ----------------------
@pytest.mark.parametrize(
    "config,match",
    [
        (dict(move_interval=1e-6), r"move_interval must be >= call_interval / 1e4"),
        (dict(move_interval=1e-300), r"move_interval must be >= call_interval / 1e4"),
        (dict(call_interval=1e-6), r"call_interval must be >= call_duration / 1e4"),
        (dict(call_interval=1e-300), r"call_interval must be >= call_duration / 1e4"),
        # An idle phone about to call in another cell walks on until now + handoff_delay.
        (
            dict(handoff_delay=1000, move_interval=0.05),
            r"move_interval must be >= handoff_delay / 1e4",
        ),
        (
            dict(handoff_delay=100, move_interval=1e-4),
            r"move_interval must be >= call_interval / 1e4",
        ),
    ],
)
def test_pcs_refuses_means_that_loop_inside_one_handler(config, match):
    from seer_env.envs import pcs_v0

    with pytest.raises(ValueError, match=match):
        pcs_v0.parallel_env(width=2, height=2, num_threads="auto", **config)


def test_pcs_at_the_ratio_bound_still_steps():
    # 1e4 moves per idle period: slow, but each handler returns.
    import time

    from seer_env.envs import pcs_v0

    env = pcs_v0.parallel_env(width=2, height=2, phones_per_cell=2, move_interval=0.036, seed=0)
    started = time.monotonic()
    env.reset(seed=0)
    for _ in range(3):
        env.step({a: 0 for a in env.agents})
    assert time.monotonic() - started < 10


# -- a lookahead below the clock's resolution: the built-in models keep their contract ----------
@pytest.mark.parametrize(
    "make,config",
    [
        ("pcs_v0", dict(width=4, height=4, handoff_delay=1e-300)),
        ("pcs_v0", dict(width=4, height=4, handoff_delay=5e-324)),
        # now + 1e-13 == now once now passes ~1e3 minutes: from the first step on.
        ("pcs_v0", dict(width=4, height=4, handoff_delay=1e-13, step_minutes=1e4)),
        ("aircraft_v0", dict(num_uavs=16, comm_latency=5e-324)),
        ("aircraft_v0", dict(num_uavs=16, comm_latency=1e-300)),
    ],
)
def test_a_lookahead_the_clock_cannot_resolve_breaks_no_contract(make, config):
    # Cross-entity events go to Context::earliest_cross_time(): now + L, or the next
    # representable time where now + L == now. Checked steps on, every executor equal.
    import importlib

    import numpy as np

    module = importlib.import_module(f"seer_env.envs.{make}")
    digests = set()
    for executor, threads in (("serial", 1), ("parallel", 1), ("parallel", 2)):
        env = module.parallel_env(
            **config, executor=executor, num_threads=threads, max_cycles=6, check_steps=6
        )
        env.reset(seed=3)
        while env.agents:
            env.step({a: np.asarray(env.action_space(a).sample() * 0 + 1) for a in env.agents})
        assert env.unwrapped.sim.steps == 6
        digests.add(env.unwrapped.sim.digest())
    assert len(digests) == 1


# -- 13. fork while another thread steps -------------------------------------------------------
FORK_MID_STEP = """
import os, threading, time
from seer_env import _core
from seer_env.envs import pcs_v0

_core._register_comparison_executors()  # locked, barrier: a fresh interpreter lacks them

def make(**kw):
    return pcs_v0.parallel_env(width=4, height=4, executor="{executor}", num_threads=2,
                               seed=0, **kw)

long = make(step_minutes=1e10, event_budget=0)
long.reset(seed=0)
stepper = threading.Thread(target=lambda: long.step({{a: 0 for a in long.agents}}))
stepper.start()
time.sleep(0.5)  # the step is in flight on the worker threads
pid = os.fork()
if pid == 0:
    try:
        # The child's env: its step never finishes here; reset() makes it usable.
        long.reset(seed=3)
        fresh = make(step_minutes=1e10, event_budget=0)
        fresh.reset(seed=3)
        assert long.sim.digest() == fresh.sim.digest()
        short = make()
        short.reset(seed=1)
        short.step({{a: 1 for a in short.agents}})
        os._exit(0)
    except BaseException as e:
        print("child failed:", type(e).__name__, e, flush=True)
        os._exit(1)
long.sim.request_interrupt()
stepper.join()
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status), flush=True)
"""


@pytest.mark.parametrize("executor", ["parallel", "locked", "barrier"])
def test_a_child_forked_mid_step_can_reset_and_use_the_env(executor):
    try:
        proc = run_child(FORK_MID_STEP.format(executor=executor), timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the forked child (or the parent) hung")
    assert "child exit 0" in proc.stdout, (proc.stdout, proc.stderr)


# -- 15. thread lifetime: no thread outlives close(); absurd counts refused --------------------
@pytest.mark.parametrize("executor", ["parallel", "locked", "barrier"])
def test_close_joins_the_env_threads_and_del_frees_them(executor):
    import gc

    from seer_env.envs import pcs_v0

    gc.collect()  # earlier tests' envs: their workers end now, not mid-test
    baseline = threads_of_this_process()
    envs = [
        pcs_v0.parallel_env(width=4, height=4, executor=executor, num_threads=3, seed=0)
        for _ in range(20)
    ]
    for env in envs:
        env.reset(seed=0)
        env.step({a: 0 for a in env.agents})
    assert threads_of_this_process() >= baseline + 40  # 2 workers each
    for env in envs:
        env.close()
    assert settled_thread_count(baseline) == baseline
    envs[0].step({a: 0 for a in envs[0].agents})  # still usable: fresh workers
    assert threads_of_this_process() == baseline + 2
    del env, envs
    gc.collect()
    assert settled_thread_count(baseline) == baseline


def test_vector_close_joins_its_threads():
    import gc

    import numpy as np

    from seer_env import vector

    gc.collect()  # earlier tests' envs: their workers end now, not mid-test
    baseline = threads_of_this_process()
    venv = vector.make("pcs_v0", num_envs=3, width=4, height=4, executor="parallel", num_threads=3)
    venv.reset(seed=0)
    venv.step(np.zeros(venv.num_envs, np.int64))
    assert threads_of_this_process() == baseline + 2
    venv.close()
    assert settled_thread_count(baseline) == baseline


def test_absurd_thread_counts_are_refused():
    import seer_env
    from seer_env.envs import pcs_v0

    most = seer_env._core.max_num_threads()
    assert most >= 64
    with pytest.raises(ValueError, match=rf"num_threads must be \"auto\" or in \[1, {most}\]"):
        pcs_v0.parallel_env(width=2, height=2, executor="parallel", num_threads=most + 1)
    with pytest.raises(ValueError, match=rf"num_threads must be in \[1, {most}\]"):
        seer_env.Simulation("phold", {"num_entities": 8}, executor="parallel", num_threads=1024)
