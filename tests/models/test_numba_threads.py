"""A compiled NumbaModel on 2-4 worker threads: the file ``make tsan-python`` runs under TSan.

Small on purpose (ThreadSanitizer slows the runtime 5-15x): the parallel
executor, the vector env's shared pool, a step on a background thread
(``step_async``) and a handler error raised on a worker thread, each checked
byte for byte against a serial run. numba's compiled handlers are not
instrumented; everything around them (the runtime's pool, barriers, event
lists, the handler context's C ABI) is.
"""

import threading

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from numba_faulty import RAISE_IN_EVENT, Faulty  # noqa: E402
from numba_pcs import NumbaPcs  # noqa: E402

import seer_env  # noqa: E402
from seer_env import SeerParallelEnv, vector  # noqa: E402

PCS = {"width": 4, "height": 3, "phones_per_cell": 6, "move_interval": 300.0}


def sim_rollout(sim, steps=4):
    """Digest and outputs of ``sim`` over ``steps`` steps with fixed actions."""
    sim.reset(7)
    out = []
    rng = np.random.default_rng(2)
    for _ in range(steps):
        sim.step(rng.integers(0, 11, size=sim.spec["num_agents"]))
        out += [sim.observations().tobytes(), sim.rewards().tobytes(), sim.infos().tobytes()]
    return sim.digest(), out


@pytest.mark.parametrize("threads", [2, 4])
def test_parallel_executor_matches_serial(threads):
    def run(executor, n):
        return sim_rollout(SeerParallelEnv(NumbaPcs, PCS, executor=executor, num_threads=n).sim)

    assert run("parallel", threads) == run("serial", 1)


def test_vector_env_on_three_threads_matches_serial():
    def run(executor, n):
        envs = vector.make(NumbaPcs, num_envs=2, seed=1, executor=executor, num_threads=n, **PCS)
        envs.reset()
        out = []
        for step in range(3):
            obs, rewards, *_ = envs.step(np.full(envs.num_envs, step % 3))
            out += [obs.tobytes(), rewards.tobytes()]
        envs.step_async(np.zeros(envs.num_envs, np.int64))  # the background worker's thread
        obs, rewards, *_ = envs.step_wait()
        out += [obs.tobytes(), rewards.tobytes()]
        envs.close()
        return out

    assert run("parallel", 3) == run("serial", 1)


def test_steps_from_another_python_thread():
    env = SeerParallelEnv(NumbaPcs, PCS, executor="parallel", num_threads=2)
    reference = sim_rollout(SeerParallelEnv(NumbaPcs, PCS, num_threads=1).sim)
    found = []
    worker = threading.Thread(target=lambda: found.append(sim_rollout(env.sim)))
    worker.start()
    worker.join()
    assert found == [reference]


def test_handler_error_on_a_worker_thread():
    env = SeerParallelEnv(
        Faulty, {"n": 6, "fault": RAISE_IN_EVENT}, executor="parallel", num_threads=3
    )
    env.reset(seed=0)
    with pytest.raises(seer_env.HandlerError, match="handling 'PING' at t=0.5") as info:
        env.step({a: 1 for a in env.agents})
    assert info.value.entity in range(6)
    env.reset(seed=0)  # usable again after a reset
    assert env.sim.steps == 0
