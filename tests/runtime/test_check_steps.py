"""Contract checks switched on between steps: ``check_next_steps`` and the envs' ``check_steps``.

A checked step runs one handler at a time (on the caller alone for the
parallel executor, a serial stand-in for the comparison executors) and only
observes: outputs are byte-identical with checking on or off, however it is
switched mid-episode, and the writer is named however the step's start is
rebuilt for the rerun (replayed from the reset, or kept).
"""

import pickle

import numpy as np
import pytest

import seer_env
from seer_env import _core, vector
from seer_env.envs import pcs_v0

PCS = {"width": 6, "height": 5, "phones_per_cell": 8}
FOREIGN_WRITE = 6  # the faulty model's mode: entity 3 writes entity 4's state from t=fail_after


def faulty_sim(executor, num_threads, fail_after=2.0, **kw):
    cfg = dict(num_entities=8, mode=FOREIGN_WRITE, culprit=3, fail_after=fail_after)
    sim = seer_env.Simulation("faulty", cfg, executor=executor, num_threads=num_threads, **kw)
    sim.reset(0)
    return sim


def pcs_actions(sim, step):
    return np.random.default_rng([7, step]).integers(0, 3, sim.spec["num_agents"], np.int64)


def pcs_run(sim, steps, switches=None):
    """Digest and observations after every step; ``switches[k]``: check_next_steps before k."""
    frames = []
    sim.reset(3)
    for k in range(steps):
        if switches and k in switches:
            sim.check_next_steps(switches[k])
        sim.step(pcs_actions(sim, k))
        frames.append((sim.digest(), sim.observations().tobytes(), sim.rewards().tobytes()))
    return frames


@pytest.mark.parametrize("executor,num_threads", [("parallel", 2), ("barrier", 3), ("serial", 1)])
def test_checking_on_or_off_mid_episode_changes_no_byte(executor, num_threads):
    reference = pcs_run(_core.Simulation("pcs", PCS), 12)
    plain = _core.Simulation("pcs", PCS, executor=executor, num_threads=num_threads)
    switched = _core.Simulation("pcs", PCS, executor=executor, num_threads=num_threads)
    assert pcs_run(plain, 12) == reference
    assert pcs_run(switched, 12, switches={0: 2, 4: 3, 9: 1}) == reference
    always = _core.Simulation("pcs", PCS, executor=executor, num_threads=num_threads, check=True)
    assert pcs_run(always, 12) == reference


def test_checked_steps_count_down_across_resets_and_run_on_one_thread():
    sim = _core.Simulation("pcs", PCS, executor="barrier", num_threads=2)
    assert sim.checked_steps_left == 0
    sim.check_next_steps(3)
    sim.reset(0)  # a reset is not a step
    assert sim.checked_steps_left == 3
    sim.step(pcs_actions(sim, 0))
    assert (sim.checked_steps_left, sim.last_step["threads"]) == (2, 1)
    sim.step(pcs_actions(sim, 1))
    sim.reset(1)
    sim.step(pcs_actions(sim, 0))
    assert (sim.checked_steps_left, sim.last_step["threads"]) == (0, 1)
    sim.step(pcs_actions(sim, 1))
    assert (sim.checked_steps_left, sim.last_step["threads"]) == (0, 2)
    assert sim.executor == "barrier" and sim.num_threads == 2  # the stand-in is not the executor


EXECUTORS = [("parallel", 2), ("locked", 2), ("barrier", 3), ("parallel", 1), ("serial", 1)]


@pytest.mark.parametrize("executor,num_threads", EXECUTORS)
def test_a_foreign_write_is_caught_in_checked_steps_on_any_executor(executor, num_threads):
    # Unchecked, several threads: the breach (from t=2) goes unnoticed (documented).
    faulty_sim(executor, num_threads).run_until(10.0)
    # Checked only up to the breach: still unnoticed.
    sim = faulty_sim(executor, num_threads)
    sim.check_next_steps(2)
    sim.run_until(10.0)
    for checked in (
        dict(steps=3),  # the step of the breach is checked
        dict(check=True),  # every step is checked
    ):
        sim = faulty_sim(executor, num_threads, check=checked.get("check", False))
        sim.check_next_steps(checked.get("steps", 0))
        with pytest.raises(seer_env.ContractViolation, match="wrote the state of entity 4") as info:
            sim.run_until(10.0)
        err = info.value
        assert (err.entity, err.target) == (3, 4) and 2.0 <= err.time < 3.0
        assert "entity 3 handling" in str(err)
        assert sim.needs_reset and sim.pending_count > 0  # pending events moved back
        sim.reset(1)
        sim.run_until(1.0)  # before fail_after: works again
        assert sim.executor == executor and sim.num_threads == num_threads


def breach(sim, until=10.0):
    with pytest.raises(seer_env.ContractViolation, match="wrote the state of entity 4") as info:
        sim.run_until(until)
    err = info.value
    assert (err.entity, err.target) == (3, 4) and "entity 3 handling" in str(err)
    assert sim.needs_reset and sim.pending_count > 0
    return err


@pytest.mark.parametrize("executor,num_threads", [("parallel", 2), ("barrier", 3), ("serial", 1)])
def test_the_writer_is_named_however_the_step_start_is_rebuilt(executor, num_threads):
    # A checked step keeps no copy of the pending events: while every step
    # since the reset was checked, the rerun that names the writer replays
    # them from the reset (step_log.hpp); otherwise the step keeps only its
    # states and the events it handles. Every way gives the same report.
    replayed = faulty_sim(executor, num_threads)
    replayed.check_next_steps(5)  # steps 1-2 pass, step 3 breaks: replay of 1-2
    reference = breach(replayed)
    after_unchecked = faulty_sim(executor, num_threads)
    after_unchecked.run_until(1.0)  # one unchecked step: no replay from the reset
    after_unchecked.check_next_steps(4)
    assert str(breach(after_unchecked)) == str(reference)
    loaded = faulty_sim(executor, num_threads)
    loaded.run_until(1.0)
    blob = loaded.save()
    loaded = faulty_sim(executor, num_threads)
    loaded.load(blob)  # another generation: no replay either
    loaded.check_next_steps(4)
    assert str(breach(loaded)) == str(reference)
    # check=True: the first StepLog.kMaxSteps steps replay, later ones keep.
    late = faulty_sim(executor, num_threads, fail_after=11.0, check=True)
    err = breach(late, until=20.0)
    assert 11.0 <= err.time < 12.0


def test_a_rerun_from_the_reset_restores_the_counters():
    sim = faulty_sim("parallel", 2)
    sim.check_next_steps(5)
    sim.run_until(2.0)
    before = (sim.now, sim.steps, sim.events_processed)
    breach(sim)
    assert (sim.now, sim.steps, sim.events_processed) == before


def test_check_next_steps_refuses_bad_counts():
    sim = _core.Simulation("pcs", PCS)
    for bad in (-1, 1.5, "3", 2**64):
        with pytest.raises(ValueError, match="steps"):
            sim.check_next_steps(bad)
    with pytest.raises(ValueError, match="check_steps"):
        pcs_v0.parallel_env(**PCS, check_steps=-1)


def test_vector_instances_check_their_first_steps_alone():
    cfg = dict(num_entities=8, num_agents=4, mode=FOREIGN_WRITE, culprit=3, fail_after=0.0)
    vec = _core.VectorSimulation("faulty", cfg, 3, executor="parallel", num_threads=2)
    zeros = np.zeros(12, np.int64)
    reset = np.full(3, 1, np.uint8)
    step = np.zeros(3, np.uint8)
    seeds = np.arange(3, dtype=np.uint64)
    vec.step(zeros, None, reset, seeds)
    vec.step(zeros, None, step, seeds)  # unchecked: unnoticed
    vec.check_next_steps(1)
    vec.step(zeros, None, reset, seeds)
    assert [vec.checked_steps_left(i) for i in range(3)] == [1, 1, 1]
    with pytest.raises(seer_env.ContractViolation, match="wrote the state of entity 4"):
        vec.step(zeros, None, step, seeds)
    assert [vec.checked_steps_left(i) for i in range(3)] == [0, 0, 0]
    assert vec.failed_instances == [0, 1, 2]


def test_vector_env_outputs_do_not_depend_on_its_first_step_checks():
    def run(**kw):
        env = vector.make("pcs_v0", 3, **PCS, executor="parallel", num_threads=2, **kw)
        frames = [env.reset(seed=5)[0]]
        for k in range(4):
            acts = np.random.default_rng(k).integers(0, 3, env.num_envs, np.int64)
            frames.append(np.concatenate([a.ravel().view(np.uint8) for a in env.step(acts)[:4]]))
        left = [env.sim.checked_steps_left(i) for i in range(3)]
        env.close()
        return frames, left

    unchecked, left = run(check_steps=0)
    assert left == [0, 0, 0]
    checked, left = run()  # the default: the first steps checked
    assert left == [max(0, seer_env.env.DEFAULT_CHECK_STEPS - 4)] * 3
    for a, b in zip(unchecked, checked):
        assert a.tobytes() == b.tobytes()


def test_env_checks_its_first_episode_only_and_pickles_what_is_left():
    env = pcs_v0.parallel_env(**PCS, executor="serial", check_steps=5, seed=0)
    env.reset()
    assert env.sim.checked_steps_left == 5
    env.step_arrays(pcs_actions(env.sim, 0))
    copy = pickle.loads(pickle.dumps(env))
    assert copy.sim.checked_steps_left == env.sim.checked_steps_left == 4
    copy.step_arrays(pcs_actions(env.sim, 1))
    env.step_arrays(pcs_actions(env.sim, 1))
    assert copy.sim.digest() == env.sim.digest()
    env.reset()  # a later episode arms nothing new
    assert env.sim.checked_steps_left == 3
    off = pcs_v0.parallel_env(**PCS, executor="serial", check_steps=0)
    off.reset()
    assert off.sim.checked_steps_left == 0
