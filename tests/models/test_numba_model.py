"""NumbaModel: compiled handlers on the worker threads, byte-identical to interpreted and to C++."""

import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

numba = pytest.importorskip("numba")

from numba_faulty import (  # noqa: E402
    BAD_TARGET,
    BELOW_ZERO,
    EARLY_SCHEDULE,
    MIXED_FLOATS,
    PING,  # noqa: E402
    RAISE_IN_EVENT,
    RAISE_IN_OBSERVE,
    TWO_RECORDS,
    WRITE_SNAPSHOT,
    Faulty,
)
from numba_pcs import NumbaPcs  # noqa: E402

import seer_env  # noqa: E402
from seer_env import SeerParallelEnv, _core  # noqa: E402
from seer_env import handler_api as api  # noqa: E402
from seer_env.testing import (  # noqa: E402
    assert_declarations_match,
    assert_modes_equivalent,
    check_contract,
    record,
)
from seer_env.testing.trajectory import compare_frames  # noqa: E402

PCS_CONFIGS = st.fixed_dictionaries(
    {
        "width": st.integers(1, 5),
        "height": st.integers(1, 4),
        "channels": st.integers(1, 12),
        "phones_per_cell": st.integers(1, 12),
        "call_interval": st.sampled_from([30.0, 120.0, 360.0]),
        "call_duration": st.sampled_from([60.0, 180.0]),
        "move_interval": st.sampled_from([90.0, 600.0, 4500.0]),
        "handoff_delay": st.sampled_from([0.25, 1.0, 7.5]),
        "step_minutes": st.sampled_from([15.0, 60.0]),
    }
)


def _executor(threads):
    return "serial" if threads == 1 else "parallel"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=PCS_CONFIGS,
    seed=st.integers(0, 2**63),
    threads=st.lists(st.integers(1, 8), min_size=1, max_size=3, unique=True),
    executor=st.sampled_from(sorted(set(_core.executor_names()) - {"serial"})),
)
def test_numba_pcs_is_the_cpp_pcs_byte_for_byte(config, seed, threads, executor):
    # The C++ model, serial, is the reference: outputs, state(), infos and the
    # runtime digest (states, streams, pending events: the records agree).
    cpp = SeerParallelEnv("pcs", config, num_threads=1)
    reference, actions = record(cpp, seed, steps=8)
    interpreted = SeerParallelEnv(NumbaPcs, {**config, "compiled": False}, num_threads=1)
    runs = [("interpreted", interpreted)]
    for n in threads:
        env = SeerParallelEnv(
            NumbaPcs, config, executor="serial" if n == 1 else executor, num_threads=n
        )
        runs.append((f"compiled, {env.runtime.executor} x{n}", env))
    for name, env in runs:
        frames, _ = record(env, seed, steps=8, actions=actions)
        found = compare_frames(reference, frames)
        assert not found, f"numba PCS ({name}) differs from C++ pcs at {found}"
        assert env.sim.totals() == cpp.sim.totals()


@pytest.mark.parametrize("seed", [0, 2**63 + 11])
def test_numba_pcs_on_every_thread_count_1_to_8(seed):
    # Every pool size 1..8 on one config with many cross-cell events (short
    # moves, several rounds per step), 10 steps: digests and output bytes.
    config = {"width": 6, "height": 5, "phones_per_cell": 8, "move_interval": 45.0}
    config.update(handoff_delay=7.5, step_minutes=60.0)
    cpp = SeerParallelEnv("pcs", config, num_threads=1)
    reference, actions = record(cpp, seed, steps=10)
    for n in range(1, 9):
        env = SeerParallelEnv(NumbaPcs, config, executor=_executor(n), num_threads=n)
        frames, _ = record(env, seed, steps=10, actions=actions)
        found = compare_frames(reference, frames)
        assert not found, f"numba PCS x{n} differs from C++ pcs at {found}"
        assert env.runtime.num_threads == n and env.sim.totals() == cpp.sim.totals()
    # The threads had to sync: a new env's first unchecked step runs on the
    # whole pool (later ones may be shed to fewer threads on a busy machine).
    env = SeerParallelEnv(NumbaPcs, config, executor="parallel", num_threads=8, check_steps=0)
    env.reset(seed=seed)
    env.step(actions[0])
    assert env.runtime.threads_used == 8
    assert env.runtime.cross_events > 0 and env.runtime.rounds > 1


@pytest.mark.parametrize(
    ("compiled", "executor", "threads"),
    [(True, "serial", 1), (True, "parallel", 2), (False, "serial", 1)],
)
def test_a_compiled_step_never_takes_the_gil(compiled, executor, threads):
    # The main thread holds the GIL for 1.5 s (pure Python, no switch) while a
    # step runs in another thread: a step that needed the GIL would take >= 1.5 s
    # by the runtime's own clock. The interpreted model does; the compiled not.
    config = {"width": 8, "height": 8, "compiled": compiled}
    env = SeerParallelEnv(NumbaPcs, config, executor=executor, num_threads=threads)
    env.reset(seed=0)
    actions = np.zeros(64, np.int64)
    env.sim.step(actions)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    try:
        worker = threading.Thread(target=env.sim.step, args=(actions,))
        worker.start()
        started = time.perf_counter()
        while time.perf_counter() - started < 1.5:
            pass
    finally:
        sys.setswitchinterval(interval)
    worker.join()
    assert env.runtime.events > 0
    if compiled:
        assert env.runtime.seconds < 1.0
    else:  # the control: interpreted handlers wait for the GIL
        assert env.runtime.seconds > 1.0


def test_kit_proves_the_two_modes_identical():
    assert_modes_equivalent(
        NumbaPcs,
        {"width": 4, "height": 3, "phones_per_cell": 6},
        seeds=(0, 5),
        steps=8,
        threads=(1, 2, 5),
    )


def test_contract_checks_pass_on_the_compiled_model():
    config = {"width": 3, "height": 3, "phones_per_cell": 5}
    report = check_contract(lambda **kw: SeerParallelEnv(NumbaPcs, config, **kw), steps=6)
    assert report.ok, report


def test_kit_reports_modes_that_differ():
    # A classic numba pitfall (float32 with a Python float): the kit names it.
    with pytest.raises(
        AssertionError, match="compiled differs from interpreted.*at step 1.*rewards"
    ):
        assert_modes_equivalent(Faulty, {"fault": MIXED_FLOATS}, seeds=(0,), steps=2, threads=(1,))


class FailsForOneAgent(Faulty):
    """``observe`` fails for agent 21 only: inside one of the boundary's ranges of agents."""

    @staticmethod
    def observe(agent, state, snapshot, params, out):
        if agent == 21:
            raise ValueError("boom in observe")
        out[0] = state["pings"]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_boundary_hook_failing_inside_a_range_names_its_agent(threads):
    # 1000 agents: the boundary calls the compiled hooks once per 16 agents.
    executor = "serial" if threads == 1 else "parallel"
    env = SeerParallelEnv(FailsForOneAgent, {"n": 1000}, num_threads=threads, executor=executor)
    with pytest.raises(seer_env.HandlerError, match=r"observe\(21\) at t=0: compiled handler"):
        env.reset(seed=0)


def test_boundary_outputs_over_many_ranges_are_the_interpreted_ones():
    # 1000 agents in ranges of 16 (the last one short): every row in its place.
    assert_modes_equivalent(Faulty, {"n": 1000}, seeds=(0,), steps=3, threads=(1, 2))


@pytest.mark.parametrize("compiled", [True, False])
def test_exception_in_handler_is_handler_error(compiled, capfd):
    env = SeerParallelEnv(Faulty, {"fault": RAISE_IN_EVENT, "compiled": compiled}, num_threads=1)
    env.reset(seed=0)
    with pytest.raises(seer_env.HandlerError, match="handling 'PING' at t=0.5") as info:
        env.step({a: 1 for a in env.agents})
    assert info.value.kind == "PING" and info.value.time == 0.5
    assert info.value.entity in range(3)
    # The message names the entity, the event kind and the time, as for a C++ model.
    assert f"handler failed: entity {info.value.entity} handling 'PING' at t=0.5: " in str(
        info.value
    )
    expected = "compiled=False" if compiled else "boom in on_event"
    assert expected in str(info.value)
    assert "Exception ignored" not in capfd.readouterr().err


@pytest.mark.parametrize("compiled", [True, False])
def test_contract_breach_is_contract_violation(compiled, capfd):
    env = SeerParallelEnv(Faulty, {"fault": EARLY_SCHEDULE, "compiled": compiled}, num_threads=1)
    env.reset(seed=0)
    with pytest.raises(seer_env.ContractViolation, match="before now \\+ lookahead") as info:
        env.step({a: 1 for a in env.agents})
    v = info.value
    assert (v.kind, v.time, v.event_time) == ("PING", 0.5, 0.75)
    assert v.target == (v.entity + 1) % 3
    assert (
        f"entity {v.entity} handling 'PING' at t=0.5 scheduled 'PING' for entity {v.target} "
        "at t=0.75 (lookahead 0.5, 3 entities)"
    ) in str(v)
    assert "Exception ignored" not in capfd.readouterr().err
    with pytest.raises(RuntimeError, match="reset"):  # the env needs reset, as for any model
        env.step({a: 1 for a in env.agents})


@pytest.mark.parametrize(
    ("fault", "error", "match"),
    [
        (RAISE_IN_OBSERVE, seer_env.HandlerError, "observe\\(0\\) at t=0: compiled handler"),
        (BELOW_ZERO, seer_env.HandlerError, "n must be >= 1"),
        (BAD_TARGET, seer_env.ContractViolation, "target is not an entity"),
    ],
)
def test_other_failures_of_compiled_handlers(fault, error, match):
    env = SeerParallelEnv(Faulty, {"fault": fault}, num_threads=2, executor="parallel")
    with pytest.raises(error, match=match):
        env.reset(seed=0)
        env.step({a: 1 for a in env.agents})


@pytest.mark.parametrize("compiled", [True, False])
def test_payload_array_must_hold_one_record(compiled):
    # A payload is a record or an array of exactly one (api.schedule).
    env = SeerParallelEnv(Faulty, {"fault": TWO_RECORDS, "compiled": compiled}, num_threads=1)
    env.reset(seed=0)
    expected = "exactly one record" if not compiled else "compiled handler on_event failed"
    with pytest.raises(seer_env.HandlerError, match=expected):
        env.step({a: 1 for a in env.agents})


def test_checked_mode_catches_a_compiled_write_to_the_snapshot():
    env = SeerParallelEnv(Faulty, {"fault": WRITE_SNAPSHOT}, num_threads=1, check=True)
    env.reset(seed=0)
    with pytest.raises(
        seer_env.ContractViolation,
        match=r"the snapshot record of entity \d+ changed during the step",
    ):
        env.step({a: 1 for a in env.agents})


def test_compiled_runs_parallel_and_interpreted_refuses():
    env = SeerParallelEnv(Faulty, {"n": 5}, num_threads=3, executor="parallel")
    env.reset(seed=1)
    _, rewards, *_ = env.step({a: 1 for a in env.agents})
    assert list(rewards.values()) == [1.0] * 5
    with pytest.raises(ValueError, match="executor must be 'serial' for a PythonModel"):
        SeerParallelEnv(Faulty, {"compiled": False}, num_threads=2, executor="parallel")
    with pytest.raises(ValueError, match="compiled must be a bool"):
        Faulty(compiled=1)


def test_model_numba_cannot_compile_fails_at_construction():
    class Uncompilable(Faulty):
        @staticmethod
        def on_event(ctx, state, snapshot, params, kind, payload):
            state["pings"] = len({"a": object()})  # Python objects: not nopython

    with pytest.raises(
        seer_env.NumbaCompileError, match="Uncompilable.on_event cannot be compiled"
    ):
        SeerParallelEnv(Uncompilable, {}, num_threads=1)


def test_compiled_once_per_class():
    SeerParallelEnv(Faulty, {}, num_threads=1)
    report = seer_env.models.numba.compile_report()
    key = f"{Faulty.__module__}.{Faulty.__qualname__}"
    assert report[key]["seconds"] >= 0
    before = dict(report[key])
    SeerParallelEnv(Faulty, {"n": 7}, num_threads=1)  # another instance: no new compile
    assert seer_env.models.numba.compile_report()[key] == before


def test_numba_pcs_declares_what_the_cpp_pcs_declares():
    assert_declarations_match(NumbaPcs, "pcs")
    spec = NumbaPcs.workload_spec()
    assert np.dtype(spec["records"]["state"]) == np.dtype(
        _core.workload_spec("pcs")["records"]["state"]
    )
    assert set(spec["records"]) >= {"state", "public", "payload", "params"}


def test_params_and_records_are_validated():
    with pytest.raises(ValueError, match="width must be in \\[1, 4096\\], got 0"):
        NumbaPcs(width=0)
    with pytest.raises(ValueError, match="handoff_delay .*-1"):
        SeerParallelEnv(NumbaPcs, {"handoff_delay": -1.0})
    with pytest.raises(ValueError, match="unknown config key 'nope'"):
        SeerParallelEnv(NumbaPcs, {"nope": 1})
    with pytest.raises(
        ValueError, match="call_interval must be <= 1000000000000.0, got 2000000000000.0"
    ):
        NumbaPcs(call_interval=2e12)
    model = Faulty()
    with pytest.raises(ValueError, match="not a field of params_dtype"):
        model.make_params(nope=1)
    model.params_record = np.zeros(1, np.dtype([("other", "<f8")]))[0]
    with pytest.raises(ValueError, match="params_record must be one"):
        model._compiled_layout()


RATIO_CASES = [
    {"move_interval": 1e-6},
    {"move_interval": 1e-300},
    {"call_interval": 1e-6},
    {"call_interval": 1e-300},
    {"call_interval": 2e11, "move_interval": 1e7},
]


@pytest.mark.parametrize("config", RATIO_CASES)
def test_numba_pcs_refuses_what_the_cpp_pcs_refuses_in_the_same_words(config):
    # pcs.cpp's require_mean_ratio: a handler would loop ~1e4+ draws per event.
    with pytest.raises(ValueError) as cpp:
        _core.Simulation("pcs", {"width": 2, "height": 2, **config})
    assert "/ 1e4 (one handler draws" in str(cpp.value)
    with pytest.raises(ValueError) as direct:
        NumbaPcs(width=2, height=2, **config)
    with pytest.raises(ValueError) as env:
        SeerParallelEnv(NumbaPcs, {"width": 2, "height": 2, **config}, num_threads=1)
    assert str(direct.value) == str(env.value) == str(cpp.value)


LOG_MEANS = st.floats(-12, 12).map(lambda e: 10.0**e)


@settings(max_examples=60, deadline=None)
@given(call_interval=LOG_MEANS, call_duration=LOG_MEANS, move_interval=LOG_MEANS)
def test_numba_pcs_accepts_exactly_the_configs_the_cpp_pcs_accepts(
    call_interval, call_duration, move_interval
):
    config = {
        "width": 2,
        "height": 2,
        "call_interval": call_interval,
        "call_duration": call_duration,
        "move_interval": move_interval,
    }
    errors = []
    for build in (lambda: _core.Simulation("pcs", config), lambda: NumbaPcs(**config)):
        try:
            build()
            errors.append(None)
        except ValueError as exc:
            errors.append(str(exc))
    assert errors[0] == errors[1]


class _StuckClock:
    """An interpreted handler context at t=1e15, where a 1e-4 draw no longer moves time."""

    class _Rng:
        def exponential(self, mean):
            return mean

        def below(self, n):
            return 0

    def __init__(self):
        self.context = type("Ctx", (), {"now": 1e15, "self": 0, "rng": self._Rng()})()


def test_numba_pcs_loops_are_capped_like_the_cpp_ones(monkeypatch):
    # pcs.cpp caps both draw loops (kMaxLoopDraws): a loop the clock cannot
    # advance raises instead of hanging. The same source is compiled; here the
    # interpreted kernel runs with a small cap so that the test is quick.
    import numba_pcs

    monkeypatch.setattr(numba_pcs, "MAX_LOOP_DRAWS", 1000)
    params = NumbaPcs(width=2, height=2, move_interval=1e-4, call_interval=1.0).params_record
    phone = np.zeros(1, numba_pcs.PHONE)[0]
    phone["next_move"], phone["next_call"] = 1e15, 2e15
    with pytest.raises(ValueError, match="drew more than 4194304 moves in one handler"):
        numba_pcs.schedule_idle(_StuckClock(), phone, params)


class ReadsTheContext(Faulty):
    """Every context constant (read from the context's header when compiled) lands in the state."""

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        seen = api.source(ctx) * 1000 + api.self_id(ctx) * 100 + api.num_entities(ctx)
        seen += np.uint64(api.dt(ctx) * 10.0 + api.lookahead(ctx) * 4.0 + api.now(ctx))
        state["pings"] += np.uint64(seen)
        api.schedule(ctx, api.self_id(ctx), api.now(ctx) + api.lookahead(ctx), PING, payload)


def test_the_context_constants_are_the_same_compiled_and_interpreted():
    assert_modes_equivalent(ReadsTheContext, {"n": 5}, seeds=(0,), steps=6, threads=(1, 2))
