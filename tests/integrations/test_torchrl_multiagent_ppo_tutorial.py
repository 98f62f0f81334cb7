"""TorchRL's multi-agent PPO tutorial loop runs against the batched env, only the env changed.

The loop is the one of TorchRL's "Multi-Agent Reinforcement Learning (PPO)"
tutorial (``multiagent_ppo.py``: a ``VmasEnv`` there): RewardSum, a
MultiAgentMLP policy with a TanhNormal head, a MultiAgentMLP critic
(centralized: MAPPO), ``Collector``, GAE with the group's done keys,
ClipPPOLoss. Its hyperparameters are scaled down so that a few iterations
take seconds; the env construction is the only other change.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from tensordict.nn import TensorDictModule  # noqa: E402
from tensordict.nn.distributions import NormalParamExtractor  # noqa: E402
from torch import multiprocessing  # noqa: E402, F401 - as the tutorial imports
from torchrl.data.replay_buffers import ReplayBuffer  # noqa: E402
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement  # noqa: E402
from torchrl.data.replay_buffers.storages import LazyTensorStorage  # noqa: E402
from torchrl.envs import RewardSum, TransformedEnv  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402
from torchrl.modules import MultiAgentMLP, ProbabilisticActor, TanhNormal  # noqa: E402
from torchrl.objectives import ClipPPOLoss, ValueEstimators  # noqa: E402

from seer_env.integrations.torchrl import make_batched_env  # noqa: E402

# TorchRL 0.14's collectors module warns about itself on import.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Creating .* WeightUpdaterBase is deprecated:DeprecationWarning"
)


def run_tutorial(env, *, expand_root_done: bool, iterations: int = 3) -> list[float]:
    """The tutorial's setup and training loop; returns each iteration's mean episode reward."""
    from torchrl.collectors import Collector  # warns about itself on import (marked above)

    device = "cpu"
    frames_per_batch = 2 * 16 * 4  # the tutorial: 6000
    n_iters = iterations
    total_frames = frames_per_batch * n_iters
    num_epochs = 2  # 30
    minibatch_size = 64  # 400
    lr = 3e-4
    max_grad_norm = 1.0
    clip_epsilon = 0.2
    gamma = 0.99
    lmbda = 0.9
    entropy_eps = 1e-4
    share_parameters_policy = True
    mappo = True

    # -- the only change: the env -------------------------------------------------------------
    env = TransformedEnv(
        env,
        RewardSum(in_keys=[env.reward_key], out_keys=[("agents", "episode_reward")]),
    )
    check_env_specs(env)

    # -- the tutorial, as it is ---------------------------------------------------------------
    policy_net = torch.nn.Sequential(
        MultiAgentMLP(
            n_agent_inputs=env.observation_spec["agents", "observation"].shape[-1],
            n_agent_outputs=2 * env.full_action_spec[env.action_key].shape[-1],
            n_agents=env.n_agents,
            centralized=False,
            share_params=share_parameters_policy,
            device=device,
            depth=2,
            num_cells=32,  # 256
            activation_class=torch.nn.Tanh,
        ),
        NormalParamExtractor(),
    )
    policy_module = TensorDictModule(
        policy_net,
        in_keys=[("agents", "observation")],
        out_keys=[("agents", "loc"), ("agents", "scale")],
    )
    policy = ProbabilisticActor(
        module=policy_module,
        spec=env.full_action_spec_unbatched[env.action_key],
        in_keys=[("agents", "loc"), ("agents", "scale")],
        out_keys=[env.action_key],
        distribution_class=TanhNormal,
        distribution_kwargs={
            "low": env.full_action_spec_unbatched[env.action_key].space.low,
            "high": env.full_action_spec_unbatched[env.action_key].space.high,
        },
        return_log_prob=True,
    )
    critic_net = MultiAgentMLP(
        n_agent_inputs=env.observation_spec["agents", "observation"].shape[-1],
        n_agent_outputs=1,
        n_agents=env.n_agents,
        centralized=mappo,
        share_params=True,
        device=device,
        depth=2,
        num_cells=32,
        activation_class=torch.nn.Tanh,
    )
    critic = TensorDictModule(
        module=critic_net,
        in_keys=[("agents", "observation")],
        out_keys=[("agents", "state_value")],
    )
    collector = Collector(
        env,
        policy,
        device=device,
        storing_device=device,
        frames_per_batch=frames_per_batch,
        total_frames=total_frames,
    )
    replay_buffer = ReplayBuffer(
        storage=LazyTensorStorage(frames_per_batch, device=device),
        sampler=SamplerWithoutReplacement(),
        batch_size=minibatch_size,
    )
    loss_module = ClipPPOLoss(
        actor_network=policy,
        critic_network=critic,
        clip_epsilon=clip_epsilon,
        entropy_coeff=entropy_eps,
        normalize_advantage=False,
    )
    loss_module.set_keys(
        reward=env.reward_key,
        action=env.action_key,
        value=("agents", "state_value"),
        done=("agents", "done"),
        terminated=("agents", "terminated"),
    )
    loss_module.make_value_estimator(ValueEstimators.GAE, gamma=gamma, lmbda=lmbda)
    GAE = loss_module.value_estimator
    optim = torch.optim.Adam(loss_module.parameters(), lr)

    episode_reward_mean_list = []
    for tensordict_data in collector:
        # The env already has each agent's flags at the reward's shape:
        assert tensordict_data.get(("next", "agents", "done")).shape == (
            tensordict_data.get_item_shape(("next", env.reward_key))
        )
        if expand_root_done:  # the tutorial's VMAS lines (VMAS has only the root flags)
            tensordict_data.set(
                ("next", "agents", "done"),
                tensordict_data.get(("next", "done"))
                .unsqueeze(-1)
                .expand(tensordict_data.get_item_shape(("next", env.reward_key))),
            )
            tensordict_data.set(
                ("next", "agents", "terminated"),
                tensordict_data.get(("next", "terminated"))
                .unsqueeze(-1)
                .expand(tensordict_data.get_item_shape(("next", env.reward_key))),
            )
        with torch.no_grad():
            GAE(
                tensordict_data,
                params=loss_module.critic_network_params,
                target_params=loss_module.target_critic_network_params,
            )
        data_view = tensordict_data.reshape(-1)
        replay_buffer.extend(data_view)
        for _ in range(num_epochs):
            for _ in range(frames_per_batch // minibatch_size):
                subdata = replay_buffer.sample()
                loss_vals = loss_module(subdata)
                loss_value = (
                    loss_vals["loss_objective"]
                    + loss_vals["loss_critic"]
                    + loss_vals["loss_entropy"]
                )
                loss_value.backward()
                torch.nn.utils.clip_grad_norm_(loss_module.parameters(), max_grad_norm)
                optim.step()
                optim.zero_grad()
        collector.update_policy_weights_()
        done = tensordict_data.get(("next", "agents", "done"))
        episode_reward_mean = (
            tensordict_data.get(("next", "agents", "episode_reward"))[done].mean().item()
        )
        episode_reward_mean_list.append(episode_reward_mean)
    collector.shutdown()
    return episode_reward_mean_list


@pytest.mark.parametrize("expand_root_done", [True, False], ids=["tutorial", "per-agent-done"])
def test_the_multiagent_ppo_tutorial_loop_trains_on_the_batched_env(expand_root_done):
    # UAVs crash in these short episodes: per-agent done differs from the root's.
    env = make_batched_env("aircraft_v1", num_envs=2, num_uavs=4, substeps=2, max_cycles=16, seed=0)
    means = run_tutorial(env, expand_root_done=expand_root_done)
    assert len(means) == 3
    assert all(m == m for m in means)  # finite: episodes ended in every batch
