"""TorchRL: PettingZooWrapper over our envs passes check_env_specs and rolls out."""

import numpy as np
import pytest
from envcases import ENV_NAMES, SMALL, make

pytest.importorskip("torchrl")
import torch  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from seer_env.integrations.torchrl import make_env, wrap  # noqa: E402


def small_env(name, **overrides):
    return make_env(name, **{**SMALL.get(name, {}), "max_cycles": 30, **overrides})


@pytest.mark.parametrize("name", ENV_NAMES)
def test_check_env_specs(name):
    env = small_env(name, seed=0)
    check_env_specs(env, seed=0)
    group = env.possible_agents[0].rsplit("_", 1)[0]
    assert list(env.group_map) == [group]  # one group: the name prefix
    assert env.group_map[group] == env.possible_agents
    env.close()


@pytest.mark.parametrize("name", ENV_NAMES)
def test_rollout_of_100_steps(name):
    env = small_env(name, seed=1, executor="parallel", num_threads=2)
    base = make(name)
    group = base.possible_agents[0].rsplit("_", 1)[0]
    n = len(base.possible_agents)
    obs_dim = base.observation_space(base.possible_agents[0]).shape
    td = env.rollout(100, break_when_any_done=False)
    assert td.batch_size == torch.Size([100])
    assert td[group, "observation"].shape == (100, n, *obs_dim)
    assert td[group, "observation"].dtype == torch.float32
    assert td["next", group, "reward"].shape == (100, n, 1)
    assert td["state"].shape == (100, *base.state_space.shape)
    mask = td[group, "mask"]
    assert mask.dtype == torch.bool and mask.shape == (100, n)
    # max_cycles=30: the env is done every 30 steps and the rollout resets it
    done = td["next", "done"].squeeze(-1)
    if name == "pcs_v0":
        assert done.nonzero().squeeze(-1).tolist() == [29, 59, 89]
        assert mask.all()
    else:  # agents can end early: every episode still ends by step 30
        assert done.sum() >= 3
    if name == "aircraft_v0":  # UAVs crash after ~20 random steps: masked from then on
        assert not mask.all()
    for key in base.reset(seed=0)[1][base.possible_agents[0]]:
        assert td["next", group, "info", key].shape == (100, n)
    env.close()


def test_rollout_matches_the_parallel_env():
    """Same seed and actions: TorchRL sees exactly what the ParallelEnv returns."""
    name = "pcs_v0"
    env = small_env(name)
    ref = make(name, max_cycles=30)
    group = ref.possible_agents[0].rsplit("_", 1)[0]
    td = env.reset(seed=3)
    obs, _ = ref.reset(seed=3)
    np.testing.assert_array_equal(td[group, "observation"].numpy(), np.stack(list(obs.values())))
    rng = np.random.default_rng(0)
    for _ in range(10):
        space = ref.action_space(ref.possible_agents[0])
        act = rng.integers(0, space.n, size=len(ref.possible_agents))
        td[group, "action"] = torch.as_tensor(act)
        td = env.step(td)
        obs, rew, *_ = ref.step(dict(zip(ref.possible_agents, act.tolist())))
        nxt = td["next"]
        np.testing.assert_array_equal(
            nxt[group, "observation"].numpy(), np.stack(list(obs.values()))
        )
        np.testing.assert_allclose(
            nxt[group, "reward"].squeeze(-1).numpy(), np.array(list(rew.values())), rtol=1e-6
        )
        td = nxt


def test_wrap_defaults_and_overrides():
    name = "pcs_v0"
    env = wrap(make(name))
    assert env.use_mask and not env.done_on_any and env.categorical_actions and env.return_state
    env2 = small_env(name, wrapper_kwargs={"return_state": False})
    assert not env2.return_state


def test_dead_agents_are_masked_and_their_actions_dropped():
    """TorchRL sends actions for dead agents too; wrap() drops them before the env."""
    from envcases import DyingEnv

    env = wrap(DyingEnv(n=3, max_cycles=5), return_state=False)
    check_env_specs(env)
    td = env.rollout(5, break_when_any_done=False)
    mask = td["next", "bot", "mask"]
    expected = [[False, True, True], [False, False, True], [False, False, True]]
    assert mask[:3].tolist() == expected
    assert td["next", "done"].squeeze(-1).tolist() == [False] * 4 + [True]
