"""Action masks: a model that declares ``action_mask`` says which actions are valid.

The C++ test model ``slots`` (cpp/tests/models/slots) and its PythonModel twin
(tests/support/slots_models.py): an agent may take only its free slots. The
masks are the model's, a forbidden action is refused before anything runs (the
env stays usable), the dict API follows PettingZoo's ``{"observation",
"action_mask"}`` convention, and models without the declaration see nothing new.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import parallel_api_test
from slots_models import Slots, SlotsAsking, first_valid

import seer_env
from seer_env import _core
from seer_env.models.numba import NumbaModel
from seer_env.testing import assert_decisions_equivalent, assert_serial_equivalent

SLOTS = 3


def expected_masks(env) -> np.ndarray:
    """What the slots model allows: waiting, and each free slot (from the state records)."""
    # "taken" is the first uint32 of the state record in both models.
    taken = env.sim.entity_states()[:, :4].copy().view("<u4")[:, 0].astype(np.int64)
    free = ((taken[:, None] >> np.arange(SLOTS)) & 1) == 0
    return np.hstack([np.ones((len(taken), 1), dtype=bool), free])


def lockstep_first_valid(seed: int, step: int, env) -> dict:
    """Each live agent takes its lowest free slot (waits when none is free)."""
    masks = env.action_masks
    actions = {}
    for agent in env.agents:
        valid = np.flatnonzero(masks[env._agent_index[agent]])
        actions[agent] = int(valid[1] if len(valid) > 1 else valid[0])
    return actions


def forbidden(masks: np.ndarray) -> tuple[int, int]:
    """The first (row, action) a mask forbids."""
    rows, actions = np.nonzero(~masks)
    return int(rows[0]), int(actions[0])


@pytest.mark.parametrize("model", ["slots", Slots], ids=["cpp", "python"])
def test_the_declaration_reaches_the_spec_and_the_spaces(model):
    env = seer_env.SeerParallelEnv(model, {}, seed=0)
    assert env.sim.spec["action_mask"] is True
    space = env.observation_space("agent_0")
    assert isinstance(space, spaces.Dict)
    assert space["action_mask"] == spaces.MultiBinary(SLOTS + 1)
    assert space["observation"] == spaces.Box(0, 1e9, (SLOTS + 2,), np.float32)
    assert env.observation_space("agent_0") is env.observation_space("agent_1")


def test_the_declarations_say_action_mask():
    _core._register_test_models()
    assert _core.workload_spec("slots")["action_mask"] is True
    assert _core.workload_spec("slots_asking")["action_mask"] is True
    assert _core.workload_spec("slots_asking")["decisions"] is True
    assert _core.workload_spec("pcs")["action_mask"] is False
    assert Slots.workload_spec()["action_mask"] is True


@pytest.mark.parametrize("model", ["slots", Slots], ids=["cpp", "python"])
def test_masks_are_what_the_model_says(model):
    env = seer_env.SeerParallelEnv(model, {}, seed=0)
    obs, _ = env.reset(seed=4)
    for _ in range(6):
        masks = env.action_masks
        assert masks.dtype == bool and masks.shape == (6, SLOTS + 1)
        np.testing.assert_array_equal(masks, expected_masks(env))
        np.testing.assert_array_equal(env.sim.action_masks(), masks)
        for agent, o in obs.items():
            assert set(o) == {"observation", "action_mask"}
            assert o["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(o["action_mask"], masks[env._agent_index[agent]])
            assert env.observation_space(agent).contains(o)
        obs, *_ = env.step(lockstep_first_valid(0, 0, env))
    assert not env.action_masks.all(), "the test model never forbade anything"


@pytest.mark.parametrize("model", ["slots", Slots], ids=["cpp", "python"])
@pytest.mark.parametrize("path", ["dict", "arrays"])
def test_a_forbidden_action_is_refused_and_the_env_goes_on(model, path):
    env = seer_env.SeerParallelEnv(model, {}, seed=0)
    env.reset(seed=2)
    row, action = forbidden(env.action_masks)
    agent = env.possible_agents[row]
    valid = np.flatnonzero(env.action_masks[row]).tolist()
    digest = env.sim.digest()
    actions = np.zeros(len(env.possible_agents), dtype=np.int64)
    actions[row] = action
    with pytest.raises(ValueError, match=rf"action {action} of {agent} is not valid now") as err:
        if path == "dict":
            env.step({a: int(x) for a, x in zip(env.possible_agents, actions)})
        else:
            env.step_arrays(actions)
    assert str(valid) in str(err.value)
    assert env.sim.digest() == digest and env.sim.steps == 0
    env.step(lockstep_first_valid(0, 0, env))  # still usable
    assert env.sim.steps == 1


def test_the_python_twin_matches_the_cpp_model():
    cpp = seer_env.SeerParallelEnv("slots", {}, seed=0)
    python = seer_env.SeerParallelEnv(Slots, {}, seed=0)
    a, b = cpp.reset(seed=7), python.reset(seed=7)
    for _ in range(8):
        for agent in a[0]:
            for key in ("observation", "action_mask"):
                np.testing.assert_array_equal(a[0][agent][key], b[0][agent][key])
        actions = lockstep_first_valid(0, 0, cpp)
        a, b = cpp.step(actions), python.step(actions)
        assert a[1] == b[1]


def test_masks_are_the_same_bytes_on_every_executor():
    assert_serial_equivalent(
        lambda **kw: seer_env.SeerParallelEnv("slots", {"agents": 24}, **kw),
        seeds=(0, 1),
        steps=8,
        threads=(1, 2),
        policy=lockstep_first_valid,
    )


def test_decision_masks_are_the_same_bytes_on_every_executor():
    assert_decisions_equivalent(
        lambda **kw: seer_env.SeerDecisionEnv("slots_asking", {"agents": 16}, max_cycles=4, **kw),
        seeds=(0, 1),
        threads=(1, 2),
        policy=first_valid,
    )


@pytest.mark.parametrize("model", ["slots", Slots], ids=["cpp", "python"])
def test_pettingzoo_parallel_api_test_passes(model):
    parallel_api_test(seer_env.SeerParallelEnv(model, {}, seed=0), num_cycles=25)


@pytest.mark.parametrize("model", ["slots_asking", SlotsAsking], ids=["cpp", "python"])
def test_decision_masks_are_the_asking_agents_and_refused_actions_change_nothing(model):
    env = seer_env.SeerDecisionEnv(model, {}, seed=0, max_cycles=5)
    obs, _ = env.reset(seed=3)
    refused = 0
    while env.agents:
        masks = env.action_masks
        np.testing.assert_array_equal(
            masks[env.needs_action], expected_masks(env)[env.needs_action]
        )
        for agent in env.agents:
            np.testing.assert_array_equal(obs[agent]["action_mask"], masks[env._agent_index[agent]])
        asked = [env._agent_index[a] for a in env.agents]
        if not masks[asked].all():
            i = next(i for i in asked if not masks[i].all())
            agent, action = env.possible_agents[i], int(np.flatnonzero(~masks[i])[0])
            digest = env.sim.digest()
            bad = {a: first_valid(a, obs[a], None) for a in env.agents}
            bad[agent] = action
            with pytest.raises(ValueError, match=rf"action {action} of {agent} is not valid now"):
                env.step(bad)
            assert env.sim.digest() == digest
            refused += 1
        obs, *_ = env.step({a: first_valid(a, obs[a], None) for a in env.agents})
    assert refused, "no request had a forbidden action"
    assert set(obs["agent_0"]) == {"observation", "action_mask"}  # the last return too


def test_snapshots_carry_the_masks():
    env = seer_env.SeerParallelEnv("slots", {}, seed=0)
    env.reset(seed=1)
    env.step(lockstep_first_valid(0, 0, env))
    snap, masks = env.snapshot(), env.action_masks
    other = seer_env.SeerParallelEnv("slots", {}, seed=0)
    obs, _ = other.restore(snap)
    np.testing.assert_array_equal(other.action_masks, masks)
    np.testing.assert_array_equal(obs["agent_2"]["action_mask"], masks[2])


def test_models_without_the_declaration_see_nothing_new():
    env = seer_env.SeerParallelEnv("pcs", {"width": 3, "height": 3}, seed=0)
    obs, _ = env.reset(seed=0)
    assert isinstance(env.observation_space(env.possible_agents[0]), spaces.Box)
    assert isinstance(obs[env.possible_agents[0]], np.ndarray)
    assert env.action_masks is None
    assert env.sim.spec["action_mask"] is False
    with pytest.raises(ValueError, match="declares no action_mask"):
        env.sim.action_masks()


def test_a_box_action_space_cannot_declare_masks():
    class BoxSlots(Slots):
        def __init__(self) -> None:
            super().__init__()
            self.action_space = spaces.Box(-1, 1, (2,), np.float32)

    with pytest.raises(ValueError, match="action_mask = True with a Box action_space"):
        seer_env.SeerParallelEnv(BoxSlots, {})


def test_a_declaration_without_valid_actions_is_refused():
    class NoHook(Slots):
        valid_actions = Slots.__mro__[1].valid_actions  # PythonModel's: not defined

    with pytest.raises(ValueError, match="does not define valid_actions"):
        seer_env.SeerParallelEnv(NoHook, {})


def test_a_wrong_valid_actions_result_names_the_hook():
    class Wrong(Slots):
        def valid_actions(self, agent, state, snapshot):
            return [True, 2, False, True]

    env = seer_env.SeerParallelEnv(Wrong, {}, seed=0)
    with pytest.raises(seer_env.HandlerError, match=r"valid_actions\(0\) must return 4 bools"):
        env.reset(seed=0)


def test_a_numba_model_cannot_declare_masks():
    class MaskedNumba(NumbaModel):
        state_dtype = np.dtype([("x", "<i8")])
        public_dtype = np.dtype([("x", "<i8")])
        action_mask = True

    with pytest.raises(ValueError, match="NumbaModel cannot declare action_mask"):
        MaskedNumba.workload_spec()
