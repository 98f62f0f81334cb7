"""TorchRL: PettingZooWrapper over our envs passes check_env_specs and rolls out."""

import numpy as np
import pytest
from envcases import AGENTS_DIE, ENV_NAMES, SMALL, cycles, make

pytest.importorskip("torchrl")
import torch  # noqa: E402
from torchrl.envs.utils import check_env_specs, step_mdp  # noqa: E402

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


# -- the batched env (SeerBatchedEnv over SeerVectorEnv) ------------------------------------------
from seer_env.integrations.torchrl import make_batched_env  # noqa: E402
from seer_env.vector import make as make_vector  # noqa: E402


def small_batched(name, num_envs=3, **overrides):
    return make_batched_env(
        name, num_envs, **{**SMALL.get(name, {}), "max_cycles": 30, **overrides}
    )


@pytest.mark.parametrize("name", ENV_NAMES)
def test_batched_check_env_specs(name):
    env = small_batched(name, seed=0)
    check_env_specs(env, seed=0)
    assert env.batch_size == torch.Size([3])
    assert list(env.group_map) == [env.group]
    base = make(name)
    assert env.group_map[env.group] == base.possible_agents
    env.close()


@pytest.mark.parametrize("name", ENV_NAMES)
def test_batched_rollout_shapes_and_masks(name):
    env = small_batched(name, seed=1, max_cycles=cycles(name, 30))
    base = make(name)
    n, g = len(base.possible_agents), env.group
    obs_dim = base.observation_space(base.possible_agents[0]).shape
    steps = 2 * cycles(name, 30) + 5
    td = env.rollout(steps, break_when_any_done=False)
    assert td.batch_size == torch.Size([3, steps])
    assert td[g, "observation"].shape == (3, steps, n, *obs_dim)
    assert td["next", g, "reward"].shape == (3, steps, n, 1)
    assert td["next", g, "reward"].dtype == torch.float32
    mask = td["next", g, "mask"]
    done = td["next", "done"].squeeze(-1)
    assert done.shape == (3, steps)
    # An instance is done exactly when none of its agents is left.
    assert torch.equal(done, ~mask.any(-1))
    assert torch.equal(td["next", "done"], td["next", "terminated"] | td["next", "truncated"])
    if name in AGENTS_DIE:
        assert not mask.all()
        gone = ~td[g, "mask"]  # gone before the step: zero rows, no reward
        assert gone.any()
        assert (td["next", g, "reward"].squeeze(-1)[gone] == 0).all()
        assert (td["next", g, "observation"][gone] == 0).all()
        for key in env._info_keys:
            assert (td["next", g, "info", key][gone] == 0).all()
    else:
        assert done.sum(-1).tolist() == [2, 2, 2]  # truncated at max_cycles, twice
        assert not td["next", "terminated"].any()
    env.close()


@pytest.mark.parametrize("name", ENV_NAMES)
def test_batched_env_matches_the_vector_env(name):
    """Same seeds and actions: the batched env returns exactly the vector env's bytes."""
    env = small_batched(name, max_cycles=cycles(name, 30))
    ref = make_vector(name, 3, **{**SMALL.get(name, {}), "max_cycles": cycles(name, 30)})
    g, m, a = env.group, 3, env.num_agents
    td = env.reset(seed=11)
    obs, infos = ref.reset(seed=11)
    np.testing.assert_array_equal(td[g, "observation"].numpy().reshape(obs.shape), obs)
    ref.action_space.seed(0)
    for _ in range(cycles(name, 30) + 5):
        actions = ref.action_space.sample()
        td[g, "action"] = torch.from_numpy(actions.reshape(m, a, *actions.shape[1:]))
        td = env.step(td)
        obs, rew, term, trunc, infos = ref.step(actions)
        nxt = td["next"]
        np.testing.assert_array_equal(nxt[g, "observation"].numpy().reshape(obs.shape), obs)
        np.testing.assert_array_equal(nxt[g, "reward"].numpy().reshape(-1), rew.astype(np.float32))
        np.testing.assert_array_equal(nxt[g, "mask"].numpy().reshape(-1), ref._alive == 1)
        for key in ref._info_keys:
            live = ref._alive == 1
            got = nxt[g, "info", key].numpy().reshape(-1)
            np.testing.assert_array_equal(got[live], infos[key][live])
        td = step_mdp(td)
        td = env.maybe_reset(td)
        if nxt["done"].any():  # the vector env autoresets on its next step; TorchRL did it now
            ref.reset(options={"reset_mask": nxt["done"].squeeze(-1).numpy()})


def test_batched_set_seed_reproduces_and_partial_reset_keeps_others():
    env = small_batched("pcs_v0", max_cycles=5)
    env.set_seed(7)
    first = env.reset()
    env.set_seed(7)
    again = env.reset()
    g = env.group
    assert torch.equal(first[g, "observation"], again[g, "observation"])
    td = env.rollout(5, break_when_any_done=False, auto_reset=False, tensordict=again)
    assert td["next", "done"][:, -1].all()
    reset = torch.tensor([[True], [False], [True]])
    out = env.reset(td[:, -1]["next"].clone().set("_reset", reset))
    assert out["done"].squeeze(-1).tolist() == [False, True, False]


# TorchRL 0.14's collectors module warns about itself on import.
@pytest.mark.filterwarnings("ignore:Creating .* WeightUpdaterBase is deprecated:DeprecationWarning")
def test_batched_env_with_a_collector_and_multiagent_mlp():
    """The MARL stack: MultiAgentMLP policy, ProbabilisticActor, Collector."""
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector  # SyncDataCollector before TorchRL 0.14
    from torchrl.modules import MultiAgentMLP, ProbabilisticActor

    env = small_batched("pcs_v0", num_envs=4, seed=0)
    g, n = env.group, env.num_agents
    obs_dim = env.observation_spec[g, "observation"].shape[-1]
    num_actions = env.full_action_spec[g, "action"].space.n
    net = MultiAgentMLP(
        n_agent_inputs=obs_dim,
        n_agent_outputs=num_actions,
        n_agents=n,
        centralized=False,
        share_params=True,
        depth=1,
        num_cells=16,
        activation_class=nn.Tanh,
    )
    module = TensorDictModule(net, in_keys=[(g, "observation")], out_keys=[(g, "logits")])
    policy = ProbabilisticActor(
        module,
        spec=env.full_action_spec[g, "action"],
        in_keys=[(g, "logits")],
        out_keys=[(g, "action")],
        distribution_class=torch.distributions.Categorical,
        return_log_prob=True,
    )
    collector = Collector(
        env,
        policy,
        frames_per_batch=4 * 40,
        total_frames=4 * 80,
    )  # no FutureWarning about a missing InitTracker: the env has "is_init"
    batches = list(collector)
    collector.shutdown()
    assert len(batches) == 2
    for batch in batches:
        assert batch.batch_size == torch.Size([4, 40])
        assert batch[g, "action"].shape == (4, 40, n)
        assert batch["next", g, "reward"].shape == (4, 40, n, 1)
        # max_cycles=30: every instance is truncated once in the first 40 steps
    assert batches[0]["next", "truncated"].squeeze(-1).sum(-1).tolist() == [1, 1, 1, 1]
    env.close()
