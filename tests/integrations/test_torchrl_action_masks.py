"""Action masks on TorchRL's decision env: ``(group, "action_mask")`` for MaskedCategorical."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from torchrl.envs.utils import check_env_specs  # noqa: E402
from torchrl.modules import MaskedCategorical  # noqa: E402

from seer_env.integrations.torchrl_decisions import make_decision_env  # noqa: E402


def test_decision_env_holds_the_masks_and_samples_valid_actions():
    env = make_decision_env("slots_asking", num_envs=2, agents=4, seed=0)
    check_env_specs(env)
    td = env.reset()
    masks = td["agents", "action_mask"]
    assert masks.dtype == torch.bool and masks.shape == (2, 4, 4)
    np.testing.assert_array_equal(masks.numpy(), env.vector_env.action_masks)
    for _ in range(10):
        dist = MaskedCategorical(logits=torch.zeros(2, 4, 4), mask=td["agents", "action_mask"])
        td["agents", "action"] = dist.sample()
        td = env.step(td)["next"]
        np.testing.assert_array_equal(
            td["agents", "action_mask"].numpy(), env.vector_env.action_masks
        )
    rollout = env.rollout(15)  # no policy: the action spec's mask keeps rand_action valid
    taken = rollout["agents", "action"]
    allowed = rollout["agents", "action_mask"].gather(-1, taken[..., None])[..., 0]
    assert allowed[rollout["agents", "mask"]].all()
    env.close()


def test_decision_env_without_masks_has_no_key():
    env = make_decision_env("pcs_admission_v0", num_envs=2, width=3, height=3, seed=0)
    assert ("agents", "action_mask") not in env.full_observation_spec.keys(True)
    env.close()
