"""The API surface refuses what it cannot honour.

Each test reproduces one way the public API could crash, lose an episode,
pass vacuously, blame the wrong agent or coerce a value silently, and checks
the clear error (or the documented behaviour) that replaced it. The
decisions (serial with several threads, unknown event kinds, 2-D
observations, kept records, pickling a vector env) are docs/reliability.md's.
"""

import gc
import pickle
import threading
import time

import numpy as np
import pytest
from ring_model import Ring, all_send

import seer_env
from seer_env import vector
from seer_env.envs import aircraft_v0, pcs_v0
from seer_env.testing import assert_serial_equivalent


def small_pcs(**kw):
    cfg = dict(width=4, height=4, phones_per_cell=2, executor="serial", seed=0)
    cfg.update(kw)
    return pcs_v0.parallel_env(**cfg)


# -- bug 10: the agent named in a non-numeric action error ----------------------------------------
def test_non_numeric_action_names_its_own_agent():
    env = small_pcs()
    env.reset(seed=0)
    actions = {a: 0 for a in env.agents}
    actions["cell_5"] = "x"  # numpy turns every other action into a string too
    with pytest.raises(ValueError, match=r"actions\['cell_5'\] must be numeric, got 'x'"):
        env.step(actions)
    rows = [0] * len(env.possible_agents)
    rows[7] = "1"
    with pytest.raises(ValueError, match=r"actions\['cell_7'\] must be numeric, got '1'"):
        env.step_arrays(rows)
    env.step({a: 0 for a in env.agents})  # nothing was changed by the refused calls


def test_non_numeric_box_action_names_its_own_agent():
    env = aircraft_v0.parallel_env(num_uavs=4, substeps=2, executor="serial", seed=0)
    env.reset(seed=0)
    actions = {a: np.zeros(4, np.float32) for a in env.agents}
    actions[env.agents[2]] = ["0", "0", "0", "0"]
    with pytest.raises(ValueError, match=rf"actions\['{env.agents[2]}'\] must be numeric"):
        env.step(actions)


# -- bug 8: the kit verifies which executor ran ----------------------------------------------------
def test_serial_equivalence_fails_when_env_fn_ignores_its_keywords():
    def ignores_everything(**kw):
        return small_pcs(width=2, height=2, executor="serial", num_threads=1)

    with pytest.raises(AssertionError, match=r"ran on executor 'serial' with 1 threads"):
        assert_serial_equivalent(ignores_everything, seeds=(0,), steps=2, threads=(2,))

    def ignores_threads(executor, num_threads):
        return small_pcs(width=2, height=2, executor=executor, num_threads=1)

    with pytest.raises(AssertionError, match=r"ran on executor 'parallel' with 1 threads"):
        assert_serial_equivalent(
            ignores_threads, seeds=(0,), steps=2, threads=(2,), executors=["parallel"]
        )


def test_serial_equivalence_needs_a_runtime_to_check():
    class Opaque:  # forwards everything but `runtime`
        def __init__(self, env):
            self._env = env

        def __getattr__(self, name):
            if name in ("runtime", "unwrapped"):
                raise AttributeError(name)
            return getattr(self._env, name)

    with pytest.raises(AssertionError, match="has no `runtime`"):
        assert_serial_equivalent(lambda **kw: Opaque(small_pcs(width=2, height=2, **kw)), steps=1)


# -- bug 5: an event kept past its handler ---------------------------------------------------------
class KeepsEvents(Ring):
    kept: list = []

    def on_event(self, ctx, state, event):
        super().on_event(ctx, state, event)
        KeepsEvents.kept.append(event)


def test_event_kept_after_the_env_is_gone_stays_valid():
    KeepsEvents.kept = []
    env = seer_env.SeerParallelEnv(KeepsEvents, {})
    env.reset(seed=0)
    env.step(all_send(env))
    del env
    gc.collect()
    event = KeepsEvents.kept[0]
    # A copy: readable after the model that made it is freed (it used to segfault).
    assert event.payload["hops"] == 1 and event.kind == 0 and event.time == 0.5
    assert "kind=0" in repr(event)


# -- decision: a kept `state` record stays live; check=True reports writes through it ------------
class KeepsState(Ring):
    kept: dict = {}

    def on_action(self, ctx, state, action):
        super().on_action(ctx, state, action)
        KeepsState.kept.setdefault(ctx.self, state)

    def on_event(self, ctx, state, event):
        super().on_event(ctx, state, event)
        KeepsState.kept[0]["hops"] += 1  # entity 0's record, from another entity's handler


def test_write_through_a_kept_state_record_is_a_reported_foreign_write():
    KeepsState.kept = {}
    env = seer_env.SeerParallelEnv(KeepsState, {}, check=True)
    env.reset(seed=0)
    with pytest.raises(seer_env.ContractViolation, match=r"wrote the state of entity 0"):
        env.step(all_send(env))


# -- bug 11: what a hook returns is checked, naming the hook ---------------------------------------
def returning(hook, value):
    def method(self, *args):
        return value

    return type(f"Returns_{hook}", (Ring,), {hook: method})


@pytest.mark.parametrize(
    ("hook", "value", "match"),
    [
        ("reward", "1.0", r"reward\(0\) must return a real number, got '1.0' \(str\) \(at t="),
        ("reward", None, r"reward\(0\) .*must return a real number, got None"),
        ("reward", np.zeros(2), r"reward\(0\) .*must return a real number, got array"),
        ("reward", 2**1100, r"reward\(0\) .*must return a real number"),
        ("terminated", None, r"terminated\(0\) .*must return a bool"),
        ("terminated", "no", r"terminated\(0\) .*must return a bool"),
        ("truncated", 0.5, r"truncated\(0\) .*must return a bool"),
        ("info", [2**70], r"info\(0\) .*must return 1 integers in \[-2\*\*63, 2\*\*63\)"),
        ("info", ["1"], r"info\(0\) .*must return 1 integers"),
        ("info", None, r"info\(0\) .*must return 1 integers"),
        ("info", [1.5], r"info\(0\) .*must return 1 integers"),
        ("observe", "ab", r"observe\(0\) .*must return 2 float32 values"),
        ("observe", None, r"observe\(0\) .*must return 2 float32 values"),
        ("observe", [[1.0], [2.0]], r"observe\(0\) .*must return 2 float32 values \(a 1-D"),
        ("observe", [1e300, 0.0], r"observe\(0\) .*within float32 range"),
        ("observe", ["1", "2"], r"observe\(0\) .*must return 2 float32 values"),
        ("global_state", [1.0], r"global_state\(0\) .*must return 5 float32 values"),
    ],
    ids=lambda x: str(x)[:20],
)
def test_bad_hook_results_are_handler_errors_naming_the_hook(hook, value, match):
    env = seer_env.SeerParallelEnv(returning(hook, value), {})
    with pytest.raises(seer_env.HandlerError, match=match) as info:
        env.reset(seed=0)
        env.step(all_send(env))
        env.state()
    assert info.value.kind == hook


def test_bad_totals_are_handler_errors():
    env = seer_env.SeerParallelEnv(returning("totals", [2**70]), {})
    env.reset(seed=0)
    with pytest.raises(seer_env.HandlerError, match=r"totals\(0\) .*must return 1 integers"):
        env.sim.totals()


def test_good_hook_results_of_every_numeric_type_are_accepted():
    class NumpyTypes(Ring):
        def reward(self, agent, state, snapshot):
            return np.float32(0.5) if agent else 1

        def terminated(self, agent, state, snapshot):
            return np.bool_(False) if agent else 0

        def info(self, agent, state, snapshot):
            return np.array([state["tokens"]], np.uint64)

        def observe(self, agent, state, snapshot):
            return np.array([1, 2], np.int32)

    env = seer_env.SeerParallelEnv(NumpyTypes, {})
    env.reset(seed=0)
    _, rewards, terms, _, infos = env.step(all_send(env))
    assert rewards["agent_0"] == 1.0 and rewards["agent_1"] == 0.5
    assert not any(terms.values()) and infos["agent_2"] == {"tokens": 1}


# -- decision: scheduling an undeclared event kind is a contract violation -------------------------
class UnknownKind(Ring):
    def on_action(self, ctx, state, action):
        ctx.schedule(ctx.self, ctx.now + 0.5, 7)


def test_unknown_event_kind_is_a_contract_violation():
    env = seer_env.SeerParallelEnv(UnknownKind, {})
    env.reset(seed=0)
    with pytest.raises(
        seer_env.ContractViolation, match=r"event kind is not declared.*scheduled 'kind#7'"
    ) as info:
        env.step(all_send(env))
    assert (info.value.entity, info.value.kind) == (0, "action")
    with pytest.raises(RuntimeError, match="failed step"):
        env.step(all_send(env))


# -- config values: ValueError naming key and value ------------------------------------------------
@pytest.mark.parametrize(
    ("value", "match"),
    [
        (10**400, r"num_entities must be a number a float64 can hold, got 1000"),
        (np.array([8, 9]), r"num_entities must be a number, got array\(\[8, 9\]\)"),
        (np.array(8.0), r"num_entities must be a number, got array\(8\.\)"),
        (True, r"num_entities must be a number, got True"),
        (np.bool_(True), r"num_entities must be a number, got"),
        (4.7, r"num_entities must be an integer in \[1, .*\], got 4.7"),
    ],
    ids=lambda x: str(x)[:20],
)
def test_bad_config_values_name_key_and_value(value, match):
    with pytest.raises(ValueError, match=match):
        seer_env.Simulation("phold", {"num_entities": value})


def test_numpy_config_scalars_are_accepted():
    a = seer_env.Simulation("phold", {"num_entities": np.int64(8), "lookahead": np.float32(0.5)})
    b = seer_env.Simulation("phold", {"num_entities": 8, "lookahead": 0.5})
    a.reset(1)
    b.reset(1)
    a.run_until(3.0)
    b.run_until(3.0)
    assert a.digest() == b.digest()


def test_python_model_sizes_are_not_truncated():
    class Fractional(Ring):
        def __init__(self):
            super().__init__()
            self.num_entities = self.num_agents = 4.7

    with pytest.raises(ValueError, match=r"num_entities must be an integer, got 4.7"):
        seer_env.SeerParallelEnv(Fractional, {})

    class BoolDt(Ring):
        def __init__(self):
            super().__init__()
            self.dt = True

    with pytest.raises(ValueError, match=r"dt must be a number, got True"):
        seer_env.SeerParallelEnv(BoolDt, {})


# -- bug 12: the low-level API coerces nothing ----------------------------------------------------
def started_sim():
    sim = seer_env.Simulation("pcs", {"width": 2, "height": 2, "phones_per_cell": 2})
    sim.reset(0)
    return sim


@pytest.mark.parametrize(
    ("actions", "alive", "match"),
    [
        (np.array(["1", "0", "0", "0"]), None, r"actions must be an integer array, got dtype <U1"),
        (np.array([1.9, 0, 0, 0]), None, r"actions must be an integer array, got dtype float64"),
        (np.array([True] * 4), None, r"actions must be an integer array, got dtype bool"),
        (np.array([0, 0, 99, 0]), None, r"actions\[2\] must be in \[0, 11\), got 99"),
        (np.array([-1, 0, 0, 0]), None, r"actions\[0\] must be in \[0, 11\), got -1"),
        (np.array([2**63, 0, 0, 0], np.uint64), None, r"actions\[0\] must be in \[0, 11\)"),
        (np.zeros(4, np.int64), [1, 0.5, 1, 1], r"alive must be a bool or 0/1 integer array .*"),
        (np.zeros(4, np.int64), [1, 2, 1, 1], r"alive must be .*got 2 at index 1"),
        (np.zeros(4, np.int64), [1, 256, 1, 1], r"alive must be .*got 256 at index 1"),
        (np.zeros(4, np.int64), ["1"] * 4, r"alive must be a bool or 0/1 integer array"),
    ],
    ids=lambda x: str(x)[:24],
)
def test_simulation_step_refuses_coercions(actions, alive, match):
    sim, shadow = started_sim(), started_sim()
    with pytest.raises(ValueError, match=match):
        sim.step(actions, alive)
    assert sim.digest() == shadow.digest() and not sim.needs_reset


def test_simulation_step_ignores_actions_of_dead_agents():
    sim, shadow = started_sim(), started_sim()
    sim.step(np.array([0, 99, 0, 0]), np.array([1, 0, 1, 1], bool))
    shadow.step(np.array([0, 0, 0, 0]), np.array([1, 0, 1, 1], np.uint8))
    assert sim.digest() == shadow.digest()


def test_simulation_box_actions_are_checked():
    sim = seer_env.Simulation("aircraft", {"num_uavs": 2, "substeps": 2})
    sim.reset(0)
    with pytest.raises(ValueError, match=r"actions must be an integer or real array, got dtype <U"):
        sim.step(np.full((2, 4), "0"))
    with pytest.raises(ValueError, match=r"actions\[1\]\[2\] must be finite and within"):
        bad = np.zeros((2, 4), np.float32)
        bad[1, 2] = np.nan
        sim.step(bad)
    sim.step(np.zeros((2, 4), np.int64))  # integers are exact in float32 here


def vector_sim():
    vec = seer_env._core.VectorSimulation("pcs", {"width": 2, "height": 2, "phones_per_cell": 2}, 2)
    vec.step(np.zeros(8, np.int64), None, np.ones(2, np.uint8), np.array([1, 2], np.uint64))
    return vec


@pytest.mark.parametrize(
    ("modes", "seeds", "match"),
    [
        ([256, 0], [1, 2], r"modes must be an integer array of 2 values in \[0, 2\], got 256"),
        ([3, 0], [1, 2], r"modes must be .*got 3 at index 0"),
        ([0.5, 0], [1, 2], r"modes must be an integer array .*got dtype float64"),
        ([1, 1], [-1, 2], r"seeds must be an integer array of 2 values in \[0, 2\*\*64\), got -1"),
        ([1, 1], [1.5, 2], r"seeds must be an integer array .*got dtype float64"),
        ([1, 1], [1], r"seeds must be an integer array .*got shape \(1,\)"),
    ],
    ids=lambda x: str(x)[:20],
)
def test_vector_simulation_step_refuses_coercions(modes, seeds, match):
    vec, shadow = vector_sim(), vector_sim()
    with pytest.raises(ValueError, match=match):
        vec.step(np.zeros(8, np.int64), None, np.array(modes), np.array(seeds))
    assert [vec.digest(i) for i in range(2)] == [shadow.digest(i) for i in range(2)]


def test_vector_simulation_checks_only_actions_it_reads():
    vec = vector_sim()
    modes = np.array([0, 2], np.uint8)  # instance 1 skips: its actions are not read
    vec.step(np.array([0, 0, 0, 0, 99, 99, 99, 99]), None, modes, np.zeros(2, np.uint64))
    with pytest.raises(ValueError, match=r"actions\[4\] must be in \[0, 11\), got 99"):
        vec.step(
            np.array([0, 0, 0, 0, 99, 0, 0, 0]), None, np.zeros(2, np.uint8), np.zeros(2, np.uint64)
        )


# -- decision: executor="serial" takes exactly 1 thread --------------------------------------------
def test_serial_executor_with_several_threads_is_refused():
    match = r"num_threads must be 1 for executor 'serial' .*got 4"
    with pytest.raises(ValueError, match=match):
        small_pcs(executor="serial", num_threads=4)
    with pytest.raises(ValueError, match=match):
        seer_env.Simulation("phold", {}, executor="serial", num_threads=4)
    sim = seer_env.Simulation("phold", {}, executor="parallel", num_threads=2)
    with pytest.raises(ValueError, match=match):
        sim.set_executor("serial", 4)
    assert small_pcs(executor="serial", num_threads=1).runtime.num_threads == 1


# -- bug 6: concurrent and re-entrant calls, and pickling during a step ----------------------------
def long_step_in_thread(env):
    """Start a step that runs until interrupted; returns (thread, started event)."""
    started = threading.Event()

    def run():
        started.set()
        try:
            env.step({a: 0 for a in env.agents})
        except KeyboardInterrupt:
            pass

    thread = threading.Thread(target=run)
    thread.start()
    started.wait()
    deadline = time.monotonic() + 10
    while not env.sim.busy and time.monotonic() < deadline:
        time.sleep(0.001)
    assert env.sim.busy
    return thread


@pytest.mark.parametrize(("executor", "num_threads"), [("serial", 1), ("parallel", 2)])
def test_pickling_during_another_threads_step_is_refused(executor, num_threads):
    env = small_pcs(step_minutes=1e10, event_budget=0, executor=executor, num_threads=num_threads)
    env.reset(seed=0)
    thread = long_step_in_thread(env)
    try:
        in_progress = "called while another call on this env is in progress"
        with pytest.raises(RuntimeError, match="pickling " + in_progress):
            pickle.dumps(env)
        with pytest.raises(RuntimeError, match=r"step\(\) " + in_progress):
            env.step({a: 0 for a in env.agents})
        with pytest.raises(RuntimeError, match=r"save\(\) " + in_progress):
            env.sim.save()
        for read in ("observations", "digest", "state", "entity_states", "pending_events"):
            with pytest.raises(RuntimeError, match=rf"{read}\(\) " + in_progress):
                getattr(env.sim, read)()
    finally:
        # Repeated: a request that lands before the step clears its stop flag
        # (just after the GIL is released) is lost (rel-core's interrupt area).
        while thread.is_alive():
            env.sim.request_interrupt()
            thread.join(0.05)
    env.reset(seed=0)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.agents == env.agents and clone.sim.digest() == env.sim.digest()


class ReentrantStep(Ring):
    env = None
    seen: list = []

    def on_action(self, ctx, state, action):
        for call in (
            lambda: ReentrantStep.env.step(all_send(ReentrantStep.env)),
            lambda: pickle.dumps(ReentrantStep.env),
            lambda: ReentrantStep.env.sim.save(),
        ):
            try:
                call()
            except RuntimeError as error:
                ReentrantStep.seen.append(str(error))


def test_reentrant_calls_from_a_handler_are_refused_clearly():
    env = seer_env.SeerParallelEnv(ReentrantStep, {})
    ReentrantStep.env, ReentrantStep.seen = env, []
    env.reset(seed=0)
    env.step(all_send(env))
    assert len(ReentrantStep.seen) == 3 * len(env.possible_agents)
    assert all("another call on this env is in progress" in s for s in ReentrantStep.seen)
    assert not any("failed step" in s for s in ReentrantStep.seen)


# -- decision: a vector env pickles (each running instance saved) ---------------------------------
def test_vector_env_pickles_and_continues_identically():
    venv = vector.make(
        "pcs_v0", num_envs=3, width=2, height=2, phones_per_cell=2, executor="serial"
    )
    venv.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(3):
        venv.step(rng.integers(0, 11, venv.num_envs))
    clone = pickle.loads(pickle.dumps(venv))
    for _ in range(4):
        actions = rng.integers(0, 11, venv.num_envs)
        for got, want in zip(clone.step(actions), venv.step(actions)):
            if isinstance(got, dict):
                assert all(np.array_equal(got[k], want[k]) for k in want)
            else:
                assert got.tobytes() == want.tobytes()
    assert [clone.sim.digest(i) for i in range(3)] == [venv.sim.digest(i) for i in range(3)]
    fresh = pickle.loads(pickle.dumps(vector.make("pcs_v0", num_envs=2, width=2, height=2)))
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        fresh.step(np.zeros(fresh.num_envs, np.int64))
