"""Ctrl-C at every point of a call: afterwards the env is consistent or refuses until reset().

Each test walks one call of one surface: the call is interrupted at its
first point (a function entry or a return in seer_env's code:
``interrupt_points``), the env is checked, then the same call from the same
state is interrupted at its second point, and so on until it completes. The
rule (docs/reliability.md, *Ctrl-C during a step*): the ParallelEnv (dict
and array paths) and the AEC env refuse ``step()`` until ``reset()`` once
the call has reached the runtime, and are untouched before; the vector envs
are always consistent, nothing left in flight: each instance keeps what the
runtime did to it, or autoresets.
"""

import numpy as np
import pytest
from interrupt_points import (
    SEER,
    SEER_AND_PETTINGZOO,
    InterruptAt,
    InterruptOn,
    SingleModel,
    VectorModel,
    interrupted_at,
    walk_points,
)

from seer_env.envs import pcs_v1

SMALL = dict(width=2, height=2, max_cycles=3, executor="serial", check_steps=0, seed=5)
PHASES = {"mid-episode": 1, "truncating": 2}


def parallel_env():
    return pcs_v1.parallel_env(**SMALL)


def aec_env():
    return pcs_v1.env(**SMALL)


def walk_single(model, steps, call, apply, prefixes=SEER):
    """Walk ``call`` on ``model.env`` (after ``steps`` steps); ``apply`` makes it on a shadow."""
    outcomes = []

    def check(exc):
        outcomes.append(model.check(apply))

    def finish(result):
        apply(model.shadow)
        assert model.fingerprint(model.env) == model.fingerprint(model.shadow)

    points = walk_points(lambda: model.prepare(steps), call, check, finish, prefixes=prefixes)
    assert points >= 10, f"only {points} points: is the hook seeing seer_env's code?"
    return outcomes


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("path", ["dict", "arrays"])
def test_parallel_env_step_is_refused_or_untouched_after_ctrl_c_at_any_point(path, phase):
    model = SingleModel(parallel_env)
    actions = {a: (3 * i) % 11 for i, a in enumerate(model.env.possible_agents)}
    rows = np.array(list(actions.values()), np.int64)
    if path == "dict":
        call, apply = (lambda: model.env.step(actions)), (lambda e: e.step(actions))
    else:
        call, apply = (lambda: model.env.step_arrays(rows)), (lambda e: e.step_arrays(rows))
    outcomes = walk_single(model, PHASES[phase], call, apply)
    # Before the runtime: untouched; from the runtime on, until the bookkeeping is done: refused.
    assert "before" in outcomes and "refused" in outcomes
    assert set(outcomes) <= {"before", "refused", "after"}


@pytest.mark.parametrize("seed", [None, 7], ids=["unseeded", "seeded"])
def test_parallel_env_reset_is_refused_or_untouched_after_ctrl_c_at_any_point(seed):
    model = SingleModel(parallel_env)
    outcomes = walk_single(
        model, 1, lambda: model.env.reset(seed=seed), lambda e: e.reset(seed=seed)
    )
    assert "before" in outcomes and "refused" in outcomes


def interrupted(call, n):
    """``call()`` with a KeyboardInterrupt at its ``n``-th point; whether it was interrupted."""
    return interrupted_at(InterruptAt(n, SEER), call)


def test_a_refused_parallel_env_says_to_call_reset():
    env = parallel_env()
    for n in range(1, 1000):  # the first point at which the step has reached the runtime
        env.reset(seed=0)
        assert interrupted(lambda: env.step(dict.fromkeys(env.agents, 1)), n)
        if env.sim.steps:
            break
    with pytest.raises(
        RuntimeError, match=r"step\(\) called after a step\(\) that was interrupted"
    ):
        env.step(dict.fromkeys(env.agents, 1))
    env.reset(seed=0)
    env.step(dict.fromkeys(env.agents, 1))


@pytest.mark.parametrize("who", ["last agent", "first agent"])
def test_aec_env_step_is_refused_or_untouched_after_ctrl_c_at_any_point(who):
    model = SingleModel(aec_env, aec=True)
    agents = model.env.possible_agents
    # A step cycle is one call per agent: "last agent" is the call that steps the ParallelEnv.
    steps = len(agents) - 1 if who == "last agent" else len(agents)

    def call():
        return model.env.step(2)

    outcomes = walk_single(model, steps, call, lambda e: e.step(2), prefixes=SEER_AND_PETTINGZOO)
    assert "refused" in outcomes and "before" in outcomes


def test_aec_env_reset_is_refused_or_untouched_after_ctrl_c_at_any_point():
    model = SingleModel(aec_env, aec=True)
    outcomes = walk_single(
        model, 5, lambda: model.env.reset(), lambda e: e.reset(), prefixes=SEER_AND_PETTINGZOO
    )
    assert "refused" in outcomes


# -- vector envs --------------------------------------------------------------------------------
KINDS = {"sync": 2, "async": 2}  # instances (the async env: one per batch)
VECTOR_PHASES = {"mid-episode": 1, "truncating": 2, "autoresetting": 3}


def walk_vector(model, steps, call, settle, finish_call=None):
    before = []

    def prepare():
        model.prepare(steps)
        before[:] = [model.state_before()]

    def check(exc):
        settle(before[0], None)
        model.check(4)

    def finish(result):
        settle(before[0], result if finish_call is None else finish_call())
        model.check(4)

    points = walk_points(prepare, call, check, finish)
    assert points >= 10, f"only {points} points"


@pytest.mark.parametrize("phase", VECTOR_PHASES)
@pytest.mark.parametrize("kind", KINDS)
def test_vector_step_is_consistent_after_ctrl_c_at_any_point(kind, phase):
    model = VectorModel(kind, KINDS[kind])
    actions = np.arange(model.env.num_envs) % 11
    walk_vector(
        model,
        VECTOR_PHASES[phase],
        lambda: model.env.step(actions),
        lambda before, out: model.settle_step(actions, before, out),
    )


@pytest.mark.parametrize("kind", KINDS)
def test_vector_step_async_is_consistent_and_leaves_all_or_nothing_in_flight(kind):
    """Interrupted, step_async() leaves nothing in flight, or (as it returns) the whole step."""
    model = VectorModel(kind, KINDS[kind])
    actions = np.arange(model.env.num_envs) % 11
    in_flight = []

    def settle(before, out):
        in_flight.append(settle_in_flight(model, actions, before, out))

    walk_vector(
        model,
        2,
        lambda: model.env.step_async(actions),
        settle,
        finish_call=lambda: model.env.step_wait(),
    )
    assert True in in_flight, "no point after the step started"


def settle_in_flight(model, actions, before, out):
    """Settle a step_async()/step_wait() call: all in flight (then waited for here) or none."""
    flying = [b._pending is not None for b in model.batches()]
    if out is None and all(flying):
        out = model.env.step_wait()  # the whole step, as if the call had not begun or ended
    else:
        assert not any(flying), "the call left part of its step in flight"
    model.settle_step(actions, before, out)
    return all(flying)


@pytest.mark.parametrize("phase", ["mid-episode", "autoresetting"])
@pytest.mark.parametrize("kind", KINDS)
def test_vector_step_wait_is_consistent_after_ctrl_c_at_any_point(kind, phase):
    model = VectorModel(kind, KINDS[kind])
    actions = np.arange(model.env.num_envs) % 11
    before = []

    def prepare():
        model.prepare(VECTOR_PHASES[phase])
        before[:] = [model.state_before()]
        model.env.step_async(actions)

    in_flight = []

    def check(exc):
        in_flight.append(settle_in_flight(model, actions, before[0], None))
        model.check(4)

    def finish(result):
        model.settle_step(actions, before[0], result)
        model.check(4)

    assert walk_points(prepare, model.env.step_wait, check, finish) >= 10
    assert False in in_flight, "no point after step_wait() took the step"


@pytest.mark.parametrize("phase", ["first reset", "mid-episode", "autoresetting"])
@pytest.mark.parametrize("kind", KINDS)
def test_vector_reset_is_consistent_after_ctrl_c_at_any_point(kind, phase):
    model = VectorModel(kind, KINDS[kind])
    before = []

    def prepare():
        if phase == "first reset":  # instances never reset: at step 0 already
            fresh = VectorModel(kind, KINDS[kind])
            model.env, model.refs, model.owed = fresh.env, fresh.refs, fresh.owed
        else:
            model.prepare(VECTOR_PHASES[phase])
        before[:] = [model.state_before()]

    def check(exc):
        model.settle_reset(21, before[0])
        model.check(4)

    def finish(result):
        model.settle_reset(21, before[0], result)
        model.check(4)

    call = lambda: model.env.reset(seed=21)  # noqa: E731 - read at call time
    assert walk_points(prepare, call, check, finish) >= 10


def test_the_walks_reach_the_bookkeeping_after_the_runtime_returned():
    """Sanity: points of a vector step lie after the runtime stepped (the late Ctrl-C)."""
    model = VectorModel("sync", 2)
    late = 0
    for n in range(1, 1000):
        model.prepare(1)
        steps0 = model.progress()[1].copy()
        if not interrupted(lambda: model.env.step(np.zeros(model.env.num_envs, np.int64)), n):
            break
        late += bool((model.progress()[1] > steps0).all())
    assert late > 5


# -- the reported cases, one exact point each ---------------------------------------------------
def test_a_late_ctrl_c_in_the_last_step_does_not_let_the_episode_run_past_max_cycles():
    """SIGINT after the runtime's last poll: the step is done, its bookkeeping is not."""
    env = parallel_env()
    env.reset(seed=0)
    for _ in range(2):
        env.step(dict.fromkeys(env.agents, 1))
    late = InterruptOn("c_return", "step")  # Simulation.step returned: the runtime stepped
    assert interrupted_at(late, lambda: env.step(dict.fromkeys(env.agents, 1)))
    assert env.sim.steps == 3 == env.max_cycles
    # Was: env.agents still listed every agent and a 4th step ran, past max_cycles.
    with pytest.raises(RuntimeError, match=r"interrupted \(Ctrl-C\).*call reset\(\)"):
        env.step(dict.fromkeys(env.possible_agents, 1))
    fresh = parallel_env()
    assert repr(env.reset(seed=1)) == repr(fresh.reset(seed=1))


def test_a_late_ctrl_c_in_reset_does_not_truncate_the_next_episode_early():
    env = parallel_env()
    env.reset(seed=0)
    for _ in range(2):
        env.step(dict.fromkeys(env.agents, 1))
    assert interrupted_at(InterruptOn("c_return", "reset"), lambda: env.reset(seed=1))
    # Was: the runtime had reset, the cycle count had not: the new episode ended after 1 step.
    with pytest.raises(RuntimeError, match=r"reset\(\) that was interrupted.*call reset\(\)"):
        env.step(dict.fromkeys(env.possible_agents, 1))
    env.reset(seed=1)
    truncs = [env.step(dict.fromkeys(env.agents, 1))[3] for _ in range(3)]
    assert [any(t.values()) for t in truncs] == [False, False, True]


@pytest.mark.parametrize("kind", KINDS)
def test_a_ctrl_c_while_a_vector_step_finishes_keeps_its_bookkeeping(kind):
    """KeyboardInterrupt at _finish_step (the async env: while it finishes batch 0)."""
    model = VectorModel(kind, KINDS[kind])
    model.prepare(1)
    before = model.state_before()
    zeros = np.zeros(model.env.num_envs, np.int64)
    assert interrupted_at(InterruptOn("call", "_finish_step"), lambda: model.env.step(zeros))
    model.assert_idle()
    # (The async env interrupts its other batches: those finish or autoreset.)
    batch0 = slice(0, model.env.num_envs // len(model.batches()))
    model.settle_step(zeros, before)
    got, want = model.env.step(zeros), model.expected_step(zeros)
    # Was: the interrupted step was not counted: its instances truncated a step late.
    assert got[3][batch0].all()
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got[:4], want[:4]))
    model.check(4)


def test_a_ctrl_c_between_starting_and_waiting_leaves_no_batch_in_flight():
    model = VectorModel("async", 2)
    model.prepare(1)
    zeros = np.zeros(model.env.num_envs, np.int64)
    assert interrupted_at(InterruptOn("call", "_wait_all"), lambda: model.env.step(zeros))
    # Was: every batch stayed in flight, and the next call raised "in flight".
    model.assert_idle()
    model.env.step(zeros)
