"""A pool of one runs the serial event loop: parallel on one thread returns serial's bytes.

With one thread there is nothing to gain from rounds, so the parallel executor
with ``num_threads=1`` (and the adaptive pool once a stalled probe confirmed
its shed to one thread, see cpp/tests/test_adaptive_pool.cpp) steps with the
serial executor's loop beside its per-entity queues (OneThreadLoop,
cpp/tests/test_one_thread_loop.cpp) and says so in ``env.runtime``. The round
machinery keeps its own equivalence tests at two threads and more
(test_parallel_equivalence.py, envs/test_pcs_v0.py, reliability/test_stateful_fuzz.py).
"""

import numpy as np
import pytest

import seer_env
from seer_env.envs import pcs_v0

PHOLD = dict(num_entities=150, population=2, remote=0.5, mean=0.3, lookahead=0.05, dt=1.0)


def saves_per_step(executor: str, threads: int, seed: int, steps: int = 6) -> list[bytes]:
    sim = seer_env.Simulation("phold", PHOLD, executor=executor, num_threads=threads)
    sim.reset(seed)
    out = [sim.save()]
    for k in range(1, steps + 1):
        sim.run_until(float(k))
        out.append(sim.save())
    return out


@pytest.mark.parametrize("seed", [0, 1, 7, 2**63 + 5])
def test_parallel_one_thread_saves_the_serial_bytes_after_every_step(seed):
    assert saves_per_step("parallel", 1, seed) == saves_per_step("serial", 1, seed)


@pytest.mark.parametrize("seed", [3, 11])
def test_pcs_on_one_thread_equals_serial_outputs_and_state(seed):
    cfg = dict(width=10, height=8, move_interval=200.0, handoff_delay=2.0, seed=seed)
    serial = pcs_v0.parallel_env(**cfg)
    one = pcs_v0.parallel_env(**cfg, executor="parallel", num_threads=1)
    actions = np.random.default_rng(seed).integers(0, 3, 80, dtype=np.int64)
    for env in (serial, one):
        env.reset()
    for _ in range(12):
        a = serial.step_arrays(actions)
        b = one.step_arrays(actions)
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
        assert serial.sim.save() == one.sim.save()


def test_one_thread_reports_the_serial_loop():
    sim = seer_env.Simulation("phold", PHOLD, executor="parallel", num_threads=1)
    sim.reset(2)
    sim.run_until(3.0)
    last = sim.last_step
    assert last["threads"] == 1 and last["rounds"] == 1  # one pass, no horizon rounds
    assert last["thread_decision"] == "1 thread: serial loop"
    # Two threads run in rounds (many: L << dt) and do not claim the serial loop
    # unless the adaptive pool shed a thread on a busy machine.
    two = seer_env.Simulation("phold", PHOLD, executor="parallel", num_threads=2)
    two.reset(2)
    two.run_until(1.0)
    assert two.last_step["threads"] == 2 and two.last_step["rounds"] > 1
    assert "serial loop" not in two.last_step["thread_decision"]


@pytest.mark.parametrize("first,then", [(1, 2), (2, 1), (1, 3)])
def test_pending_events_carry_over_between_thread_counts(first, then):
    # A save taken on one thread count loads into another (the pending events
    # go into the per-entity queues, which both loops step), and the
    # trajectory continues as serial's.
    expected = saves_per_step("serial", 1, 5, steps=8)
    a = seer_env.Simulation("phold", PHOLD, executor="parallel", num_threads=first)
    a.reset(5)
    a.run_until(4.0)
    b = seer_env.Simulation("phold", PHOLD, executor="parallel", num_threads=then)
    b.load(a.save())
    got = []
    for k in range(5, 9):
        b.run_until(float(k))
        got.append(b.save())
    assert got == expected[5:]
    # And switching executors mid-run (collect_pending after a one-thread step).
    b.set_executor("parallel", first)
    b.run_until(9.0)
    a.run_until(9.0)
    assert a.digest() == b.digest()
