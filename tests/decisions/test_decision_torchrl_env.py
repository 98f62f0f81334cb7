"""TorchRL's batched env of a decision model: specs, the mask, and the vector env's bytes."""

import numpy as np
import pytest

torch = pytest.importorskip("torchrl") and pytest.importorskip("torch")
from decision_models import TallyNumba  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import seer_env  # noqa: E402
from seer_env.integrations.torchrl import make_batched_env  # noqa: E402
from seer_env.integrations.torchrl_decisions import SeerDecisionBatchedEnv  # noqa: E402

M = 3
CONFIG = {"width": 4, "height": 4, "max_cycles": 1}


def batched(seed=0, **options):
    return make_batched_env("pcs_admission_v0", M, **CONFIG, seed=seed, **options)


def test_make_batched_env_routes_a_decision_env_and_its_specs_check():
    env = batched()
    assert isinstance(env, SeerDecisionBatchedEnv)
    assert env.n_agents == 16 and env.group_map["agents"][0] == "cell_0"
    check_env_specs(env)
    td = env.rollout(10)
    assert td["agents", "mask"].shape == (M, td.shape[1], 16)
    assert td["agents", "decision_time"].dtype == torch.float64
    assert td["next", "agents", "reward"].shape == (M, td.shape[1], 16, 1)
    # NaN exactly where not asked.
    asked = td["agents", "mask"]
    times = td["agents", "decision_time"][..., 0]
    assert torch.isnan(times[~asked]).all() and not torch.isnan(times[asked]).any()
    env.close()


def test_a_compiled_numba_model_and_a_renamed_group():
    env = make_batched_env(TallyNumba, 2, n=4, seed=1, max_cycles=2, group="tally")
    check_env_specs(env)
    assert env.rollout(5)["tally", "mask"].any()


@pytest.mark.parametrize(
    "options", [{"executor": "serial"}, {"executor": "parallel", "num_threads": 2}]
)
def test_a_rollout_returns_the_vector_envs_bytes_across_resets(options):
    """TorchRL resets done instances through "_reset": the twin vector env does the same."""
    seed = 7
    env = batched(seed, **options)
    g = torch.Generator().manual_seed(0)

    def policy(td):
        # Random actions in every row: the env uses the asked rows only.
        td["agents", "action"] = torch.randint(0, 2, (M, 16), generator=g)
        return td

    td = env.rollout(60, policy, break_when_any_done=False)
    twin = seer_env.vector.make("pcs_admission_v0", M, **CONFIG, seed=seed, **options)
    obs, infos = twin.reset()
    resets = 0
    for t in range(td.shape[1]):
        step = td[:, t]
        assert step["agents", "observation"].numpy().tobytes() == obs.tobytes()
        assert step["agents", "mask"].numpy().tolist() == infos["needs_action"].tolist()
        assert (
            step["agents", "decision_time"][..., 0].numpy().tobytes()
            == infos["decision_time"].tobytes()
        )
        obs, rewards, terms, truncs, infos = twin.step(step["agents", "action"].numpy())
        nxt = step["next"]
        assert nxt["agents", "observation"].numpy().tobytes() == obs.tobytes()
        assert (
            nxt["agents", "reward"][..., 0].numpy().tobytes()
            == rewards.astype(np.float32).tobytes()
        )
        assert nxt["agents", "truncated"][..., 0].numpy().tolist() == truncs.tolist()
        assert nxt["agents", "mask"].numpy().tolist() == infos["needs_action"].tolist()
        done = truncs.all(axis=1) | terms.all(axis=1)
        assert nxt["done"][:, 0].numpy().tolist() == done.tolist()
        if done.any():
            resets += 1
            obs, infos = twin.reset(options={"reset_mask": done})
    assert resets >= 2


def test_stepping_a_done_instance_without_reset_restarts_it():
    env = batched(3)
    td = env.reset()
    while True:
        td["agents", "action"] = torch.ones(M, 16, dtype=torch.int64)
        td = env.step(td)
        done = td["next", "done"][:, 0]
        if done.any():
            break
        td = td["next"]
    nxt = env.step(td["next"].set(("agents", "action"), torch.ones(M, 16, dtype=torch.int64)))
    assert nxt["next", "is_init"][:, 0].tolist() == done.tolist()
    assert not nxt["next", "done"][done].any()
    assert (nxt["next", "agents", "reward"][done] == 0).all()


def test_actions_in_rows_not_asked_are_ignored_and_a_bad_shape_is_refused():
    a, b = batched(5), batched(5)
    ta, tb = a.reset(), b.reset()
    asked = ta["agents", "mask"]
    ta["agents", "action"] = torch.ones(M, 16, dtype=torch.int64)
    tb["agents", "action"] = torch.where(asked, 1, 7)  # 7: outside Discrete(2), never read
    na, nb = a.step(ta)["next"], b.step(tb)["next"]
    assert (na["agents", "observation"] == nb["agents", "observation"]).all()
    ta = na.set(("agents", "action"), torch.ones(M, 16, 1, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"actions must have shape \(3, 16\)"):
        a._step(ta)
