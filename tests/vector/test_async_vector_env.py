"""The async vector env: byte-identical to the sync one, failures reach step_wait, clean close."""

import gc
import threading
import time

import numpy as np
import pytest
from os_threads import settled_thread_count, threads_of_this_process

import seer_env
from seer_env import _core, vector
from seer_env.vector import SeerAsyncVectorEnv

CFG = {
    "pcs_v0": dict(width=4, height=3, max_cycles=6, move_interval=200),
    "aircraft_v0": dict(num_uavs=8, substeps=2, max_cycles=40),
}


@pytest.mark.parametrize("executor,threads", [("serial", 1), ("parallel", 2)])
@pytest.mark.parametrize("name", sorted(CFG))
def test_pipelined_half_batches_equal_the_sync_vector_env(name, executor, threads):
    """Two half-batches in flight, crossing autoresets: the bytes of SeerVectorEnv."""
    cfg = dict(CFG[name], executor=executor, num_threads=threads)
    ref = vector.make(name, 4, **cfg)
    env = vector.make_async(name, 4, num_batches=2, **cfg)
    obs, infos = env.reset(seed=21)
    ref_obs, ref_infos = ref.reset(seed=21)
    assert obs.tobytes() == ref_obs.tobytes()
    rng = np.random.default_rng(5)
    half = [env.rows(0), env.rows(1)]
    for _ in range(50):
        actions = ref.action_space.sample() if name == "aircraft_v0" else None
        if actions is None:
            actions = rng.integers(0, ref.single_action_space.n, size=ref.num_envs)
        expected = ref.step(actions)
        env.step_async(actions[half[0]], batch=0)
        env.step_async(actions[half[1]], batch=1)  # both halves in flight
        second = env.step_wait(batch=1)
        first = env.step_wait(batch=0)
        for k in range(4):
            got = np.concatenate([first[k], second[k]])
            assert got.tobytes() == expected[k].tobytes()
        for key, value in expected[4].items():
            got = np.concatenate([first[4][key], second[4][key]])
            assert got.tobytes() == value.tobytes()
    # step() (every batch in the background, then wait) is the same too.
    actions = np.zeros(ref.action_space.shape, ref.action_space.dtype)
    for k, (a, b) in enumerate(zip(env.step(actions)[:4], ref.step(actions)[:4])):
        assert a.tobytes() == b.tobytes(), k
    env.close()


def test_seeds_follow_the_instance_index():
    env = SeerAsyncVectorEnv("pcs_v0", 6, num_batches=3, seed=40, **CFG["pcs_v0"])
    ref = vector.make("pcs_v0", 6, seed=40, **CFG["pcs_v0"])
    assert env.reset()[0].tobytes() == ref.reset()[0].tobytes()
    seeds = [9, 8, 7, 6, 5, 4]
    assert env.reset(seed=seeds)[0].tobytes() == ref.reset(seed=seeds)[0].tobytes()
    mask = np.array([1, 0, 0, 1, 1, 0], bool)
    a = env.reset(options={"reset_mask": mask})[0]
    b = ref.reset(options={"reset_mask": mask})[0]
    assert a.tobytes() == b.tobytes()
    env.close()


def test_a_failure_inside_a_background_step_reaches_step_wait_with_the_instance():
    # Every step needs more events than a budget of 1: each instance fails.
    env = vector.make_async("pcs_v0", 4, num_batches=2, event_budget=1, **CFG["pcs_v0"])
    env.reset(seed=0)
    actions = np.zeros(env.action_space.shape, np.int64)
    env.step_async(actions[env.rows(1)], batch=1)
    with pytest.raises(seer_env.EventBudgetExceeded, match=r"^instance 2: ") as info:
        env.step_wait(batch=1)
    assert info.value.instance == 2  # instances 2 and 3 are batch 1's
    # The failed instances autoreset on their next step: no step is left in flight.
    obs, rew, term, trunc, _ = env.batches[1].step(actions[env.rows(1)])
    assert not rew.any() and not term.any() and not trunc.any()
    env.close()


def test_core_step_async_failure_names_every_failed_instance():
    sim = _core.VectorSimulation(
        "faulty", dict(num_entities=8, num_agents=2, mode=5, culprit=3, fail_after=0.0), 3
    )
    sim.step(np.zeros(6, np.int64), None, np.ones(3, np.uint8), np.arange(3, dtype=np.uint64))
    sim.step_async(np.zeros(6, np.int64), None, np.zeros(3, np.uint8), np.zeros(3, np.uint64))
    assert sim.in_flight
    with pytest.raises(RuntimeError, match="in flight"):
        sim.observations  # noqa: B018 - the C++ thread is writing it
    with pytest.raises(RuntimeError, match="in flight"):
        sim.step(np.zeros(6, np.int64), None, np.zeros(3, np.uint8), np.zeros(3, np.uint64))
    with pytest.raises(seer_env.HandlerError, match="deliberate failure"):
        sim.step_wait()
    assert sim.failed_instances == [0, 1, 2]
    assert not sim.in_flight
    with pytest.raises(RuntimeError, match="without a step_async"):
        sim.step_wait()
    sim.close()


def test_call_order_is_enforced():
    env = vector.make_async("pcs_v0", 2, num_batches=2, **CFG["pcs_v0"])
    actions = np.zeros(env.action_space.shape, np.int64)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step_async(actions[env.rows(0)], batch=0)
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="without a step_async"):
        env.step_wait(batch=0)
    env.step_async(actions[env.rows(0)], batch=0)
    with pytest.raises(RuntimeError, match="in flight"):
        env.step_async(actions[env.rows(0)], batch=0)
    with pytest.raises(RuntimeError, match="in flight"):
        env.reset()
    with pytest.raises(ValueError, match="batch"):
        env.step_wait(batch=2)
    with pytest.raises(ValueError, match="actions"):
        env.step_async(np.full(env.action_space.shape[0] // 2, 99), batch=1)
    env.step_wait(batch=0)
    with pytest.raises(ValueError, match="num_batches must divide"):
        vector.make_async("pcs_v0", 3, num_batches=2, **CFG["pcs_v0"])
    env.close()


def test_close_joins_the_background_threads():
    gc.collect()  # earlier tests' envs: their threads end now, not mid-test
    before = threads_of_this_process()
    # Serial batches: one background thread each and no pool, so the count is
    # exact (with the default "auto", STPA may give each batch a pool of 2 on
    # a busy machine: two more threads, joined by close() too).
    env = vector.make_async("pcs_v0", 4, num_batches=2, executor="serial", **CFG["pcs_v0"])
    env.reset(seed=0)
    actions = np.zeros(env.action_space.shape, np.int64)
    env.step_async(actions)  # both batches in flight
    assert settled_thread_count(before + 2) == before + 2
    env.close()  # waits for the steps in flight, then joins
    assert settled_thread_count(before) == before


def test_step_wait_releases_the_gil():
    """Another Python thread keeps running while the caller waits for the C++ step."""
    env = vector.make_async("pcs_v0", 2, num_batches=1, width=48, height=48, max_cycles=100)
    env.reset(seed=0)
    actions = np.zeros(env.action_space.shape, np.int64)
    env.step(actions)  # warm up
    ticks, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        seen = []
        for _ in range(5):
            env.step_async(actions, batch=0)
            start = ticks[0]
            env.step_wait(batch=0)
            seen.append(ticks[0] - start)
    finally:
        stop.set()
        counter.join()
    assert max(seen) > 0
    env.close()
