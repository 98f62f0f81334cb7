"""seer_env.PythonModel: Python handlers on the runtime, with the runtime's checks."""

import pickle

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test
from ring_model import Ring, all_send, ring_env

import seer_env
from seer_env.testing.rng import EntityRng


def test_passes_the_pettingzoo_tests():
    parallel_api_test(ring_env(seed=0), num_cycles=30)
    parallel_seed_test(ring_env)


def test_events_snapshot_infos_state_and_totals():
    env = ring_env(seed=1)
    env.reset()
    obs, rewards, _, _, infos = env.step(all_send(env))
    # Tokens sent at t=0 arrive at t=0.5 < 1: handled within the step; the
    # snapshot at the boundary already shows them.
    assert obs["agent_0"].tolist() == [1.0, 1.0]
    assert infos["agent_3"] == {"tokens": 1}
    assert env.state().tolist() == [1.0] * 5
    assert env.sim.totals() == {"tokens": 5}
    assert env.sim.spec["event_kinds"] == ["TOKEN"]


def test_rng_is_the_entity_stream():
    env = ring_env(seed=42)
    env.reset()
    _, rewards, *_ = env.step(all_send(env))
    assert [rewards[f"agent_{e}"] for e in range(5)] == [
        EntityRng(42, e).uniform() for e in range(5)
    ]


def test_pickle_and_digest_round_trip():
    env = ring_env(seed=3)
    env.reset()
    env.step(all_send(env))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.sim.digest() == env.sim.digest()
    assert clone.step(all_send(clone))[0]["agent_1"].tolist() == (
        env.step(all_send(env))[0]["agent_1"].tolist()
    )


@pytest.mark.parametrize(
    ("executor", "num_threads"), [("parallel", 1), ("locked", 2), ("serial", 2)]
)
def test_refuses_other_executors(executor, num_threads):
    with pytest.raises(ValueError, match="PythonModel"):
        ring_env(executor=executor, num_threads=num_threads)
    env = ring_env()
    with pytest.raises(ValueError, match="executor must be 'serial' for a PythonModel"):
        env.sim.set_executor("parallel", 2)


def test_contract_violation_from_schedule_has_its_attributes():
    env = ring_env(delay=0.25, seed=0)  # below the lookahead
    env.reset()
    with pytest.raises(seer_env.ContractViolation, match="before now \\+ lookahead") as info:
        env.step(all_send(env))
    assert (info.value.entity, info.value.kind, info.value.target) == (0, "action", 1)
    assert info.value.event_time == 0.25
    with pytest.raises(RuntimeError, match="reset"):
        env.step(all_send(env))


class Swallower(Ring):
    def on_action(self, ctx, state, action):
        try:
            ctx.schedule(ctx.self, ctx.now - 1.0, 0)
        except seer_env.ContractViolation:
            pass  # a model cannot hide a breach


def test_a_swallowed_violation_is_still_raised():
    env = seer_env.SeerParallelEnv(Swallower, {})
    env.reset(seed=0)
    with pytest.raises(seer_env.ContractViolation, match="self-event scheduled before now"):
        env.step(all_send(env))


class Raiser(Ring):
    def on_event(self, ctx, state, event):
        raise KeyError("no such token")


def test_python_exception_becomes_handler_error():
    env = seer_env.SeerParallelEnv(Raiser, {})
    env.reset(seed=0)
    with pytest.raises(seer_env.HandlerError, match="entity 1 handling 'TOKEN' at t=0.5.*KeyError"):
        env.step(all_send(env))


class BadObservation(Ring):
    def observe(self, agent, state, snapshot):
        return [1.0, 2.0, 3.0]


def test_boundary_hook_errors_name_the_hook():
    with pytest.raises(seer_env.HandlerError, match="observe\\(0\\) must return 2 float32"):
        seer_env.SeerParallelEnv(BadObservation, {}).reset(seed=0)


class KeepsContext(Ring):
    kept = None

    def on_action(self, ctx, state, action):
        KeepsContext.kept = ctx


def test_context_outside_its_handler_is_refused():
    env = seer_env.SeerParallelEnv(KeepsContext, {})
    env.reset(seed=0)
    env.step(all_send(env))
    with pytest.raises(RuntimeError, match="outside its handler"):
        KeepsContext.kept.schedule(0, 5.0, 0)


def test_boundary_records_are_read_only():
    class Writer(Ring):
        def reward(self, agent, state, snapshot):
            state["tokens"] = 7
            return 0.0

    with pytest.raises(seer_env.HandlerError, match="read-only"):
        seer_env.SeerParallelEnv(Writer, {}).reset(seed=0)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"state_dtype": None}, "state_dtype must be set"),
        ({"state_dtype": np.dtype("<f8")}, "structured numpy dtype"),
        ({"state_dtype": np.dtype({"names": ["a"], "formats": ["<u4"], "itemsize": 8})}, "padding"),
        ({"state_dtype": np.dtype([("a", "O")])}, "not Python objects"),
        ({"public_fields": ("nope",)}, "public_fields must name fields"),
        ({"payload_dtype": np.dtype([("a", "<f8", (9,))])}, "at most 64 bytes"),
    ],
)
def test_record_declarations_are_validated(attrs, message):
    bad = type("Bad", (Ring,), attrs)
    with pytest.raises(ValueError, match=message):
        seer_env.SeerParallelEnv(bad, {})


def test_sizes_are_validated():
    with pytest.raises(ValueError, match="num_entities must be in"):
        ring_env(num_entities=0)
    with pytest.raises(ValueError, match="model must be a registered model name or a PythonModel"):
        seer_env.SeerParallelEnv(int, {})
