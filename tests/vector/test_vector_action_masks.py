"""Action masks on the vector envs: each instance's rows are its single env's masks.

The C++ test model ``slots`` / ``slots_asking`` (cpp/tests/models/slots):
``SeerVectorEnv.action_masks`` is bool ``[num_envs, n]`` (one row per agent
row), ``SeerDecisionVectorEnv.action_masks`` bool ``[M, agents, n]``; an action
a mask forbids is refused before any instance steps.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

import seer_env
import seer_env.vector

AGENTS, M = 4, 3


def highest_valid(masks: np.ndarray) -> np.ndarray:
    """Each row's highest valid action."""
    return (masks.shape[-1] - 1 - np.argmax(masks[..., ::-1], axis=-1)).astype(np.int64)


def test_lockstep_vector_masks_are_the_single_envs():
    vec = seer_env.vector.make("slots", num_instances=M, agents=AGENTS, seed=5)
    singles = [seer_env.SeerParallelEnv("slots", {"agents": AGENTS}, seed=5 + i) for i in range(M)]
    vec.reset()
    for env in singles:
        env.reset()
    assert isinstance(vec.single_observation_space, spaces.Box)  # plain arrays
    for _ in range(5):
        masks = vec.action_masks
        assert masks.dtype == bool and masks.shape == (M * AGENTS, 4)
        np.testing.assert_array_equal(masks, np.vstack([e.action_masks for e in singles]))
        actions = highest_valid(masks)
        vec.step(actions)
        for i, env in enumerate(singles):
            env.step_arrays(actions[i * AGENTS : (i + 1) * AGENTS])
    vec.close()


def test_lockstep_vector_refuses_a_forbidden_action_before_any_instance_steps():
    vec = seer_env.vector.make("slots", num_instances=M, agents=AGENTS, seed=1)
    vec.reset()
    masks = vec.action_masks
    rows, actions = np.nonzero(~masks)
    row, action = int(rows[-1]), int(actions[-1])  # a late row: earlier instances must not step
    given = highest_valid(masks)
    given[row] = action
    digests = [vec.sim.digest(i) for i in range(M)]
    instance, agent = divmod(row, AGENTS)
    with pytest.raises(
        ValueError, match=rf"action {action} of agent_{agent} of instance {instance} is not valid"
    ):
        vec.step(given)
    assert [vec.sim.digest(i) for i in range(M)] == digests
    vec.step(highest_valid(masks))  # still usable
    vec.close()


def test_decision_vector_masks_are_the_instances_and_refusals_change_nothing():
    vec = seer_env.vector.make("slots_asking", num_instances=M, agents=AGENTS, seed=2)
    vec.reset()
    refused = False
    for _ in range(12):
        masks = vec.action_masks
        assert masks.shape == (M, AGENTS, 4)
        np.testing.assert_array_equal(masks, np.stack([e.action_masks for e in vec.envs]))
        forbidden = vec.needs_action[..., None] & ~masks
        if not refused and forbidden.any():
            i, j, action = (int(x) for x in np.argwhere(forbidden)[0])
            given = highest_valid(masks)
            given[i, j] = action
            digests = [e.sim.digest() for e in vec.envs]
            with pytest.raises(ValueError, match=rf"action {action} of agent_{j} of instance {i}"):
                vec.step(given)
            assert [e.sim.digest() for e in vec.envs] == digests
            refused = True
        vec.step(highest_valid(masks))
    assert refused
    vec.close()


def test_vector_envs_of_unmasked_models_have_no_masks():
    vec = seer_env.vector.make("pcs_v0", num_instances=2, width=3, height=3)
    assert vec.action_masks is None
    vec.close()
