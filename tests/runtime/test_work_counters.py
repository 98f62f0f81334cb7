"""The parallel executor's work counters in ``last_step`` and ``env.runtime``.

They count work, not time: rounds, entities found ready (with events to handle)
and entity queue lines read (each entity's once as the step begins, then only
those of the entities a round lists as ready). Their equality across runs
and thread counts is checked in C++ (cpp/tests/test_work_counters.cpp, with
the adaptive pool off); here, what a Python user reads.
"""

import numpy as np

import seer_env
from seer_env import vector
from seer_env.envs import pcs_v0

CONFIG = {"width": 10, "height": 8, "move_interval": 45.0}
ENTITIES = 80


def _steps(executor: str, num_threads: int, steps: int = 4) -> list[dict]:
    sim = seer_env.Simulation("pcs", CONFIG, executor=executor, num_threads=num_threads)
    sim.reset(1)
    out = []
    for _ in range(steps):
        sim.run_until(sim.now + 60.0)
        out.append(dict(sim.last_step))
    return out


def test_rounds_read_only_the_queues_of_ready_entities():
    for last in _steps("parallel", 2):
        if "serial loop" in last["thread_decision"]:  # a confirmed shed: no rounds
            assert last["threads"] == 1
            assert last["ready"] == 0 and last["queue_reads"] == 0
            continue
        # Rounds, on both threads or (a tentative shed) on one.
        assert last["queue_reads"] == ENTITIES + last["ready"]
        assert 0 < last["ready"] <= last["events"]
        assert last["ready"] < last["rounds"] * ENTITIES


def test_serial_loop_reports_no_round_work():
    for last in _steps("serial", 1):
        assert last["events"] > 0
        assert last["ready"] == 0 and last["queue_reads"] == 0


def test_env_runtime_and_vector_instances_carry_the_counters():
    env = pcs_v0.parallel_env(**CONFIG, executor="parallel", num_threads=2)
    env.reset(seed=2)
    env.step({a: 0 for a in env.agents})
    runtime = env.runtime
    last = env.sim.last_step
    assert (runtime.ready, runtime.queue_reads) == (last["ready"], last["queue_reads"])
    venv = vector.make("pcs_v0", num_instances=2, executor="parallel", num_threads=2, **CONFIG)
    venv.reset(seed=0)
    venv.step(np.zeros(venv.num_envs, np.int64))
    for i in range(2):
        last = venv.sim.last_step(i)
        assert last["events"] > 0
        if last["threads"] == 2:
            assert last["queue_reads"] == ENTITIES + last["ready"]
            assert 0 < last["ready"] <= last["events"]
    venv.close()
