"""The batched TorchRL envs' specs, from one instance's spaces.

``SeerBatchedEnv`` and ``SeerDecisionBatchedEnv`` build theirs here.
Unbatched (one instance): ``EnvBase`` adds the ``[num_envs]`` batch dimension.
The agents form one group; every key's shape and dtype is what
``seer_env.integrations.torchrl_batched`` documents, and what its steps build.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from gymnasium import spaces
from torchrl.data import Bounded, Categorical, Composite, Unbounded

# Each agent's and each instance's end flags.
FLAGS = ("done", "terminated", "truncated")


class Specs(NamedTuple):
    """The env's four unbatched specs, as ``EnvBase``'s ``full_*_spec_unbatched``."""

    observation: Composite
    action: Composite
    reward: Composite
    done: Composite


def unbatched_specs(
    a: int,
    obs_space: spaces.Box,
    act_space: spaces.Space,
    state_space: spaces.Box,
    group: str,
    info_keys: list[str],
    neighbour_degree: int | None = None,
) -> Specs:
    """The specs of one instance of ``a`` agents in ``group``, from one agent's spaces.

    ``info_keys``: one int64 entry per key under ``(group, "info")``;
    ``neighbour_degree``: the group holds the neighbour table, this wide (None:
    no table).
    """
    obs_shape = torch.Size([a, *obs_space.shape])
    low = torch.as_tensor(obs_space.low).expand(obs_shape)
    high = torch.as_tensor(obs_space.high).expand(obs_shape)
    if torch.isfinite(low).all() and torch.isfinite(high).all():
        observation = Bounded(low, high, obs_shape, dtype=torch.float32)
    else:
        observation = Unbounded(obs_shape, dtype=torch.float32)
    group_obs = Composite(
        observation=observation,
        mask=Categorical(2, torch.Size([a]), dtype=torch.bool),
        shape=torch.Size([a]),
    )
    if neighbour_degree is not None:
        group_obs["neighbours"] = Bounded(
            -1, a - 1, torch.Size([a, neighbour_degree]), dtype=torch.int64
        )
    if info_keys:
        group_obs["info"] = Composite(
            {k: Unbounded(torch.Size([a]), dtype=torch.int64) for k in info_keys},
            shape=torch.Size([a]),
        )
    if isinstance(act_space, spaces.Discrete):
        action = Categorical(act_space.n, torch.Size([a]), dtype=torch.int64)
    else:
        act_shape = torch.Size([a, *act_space.shape])
        action = Bounded(
            torch.as_tensor(act_space.low).expand(act_shape),
            torch.as_tensor(act_space.high).expand(act_shape),
            act_shape,
            dtype=torch.float32,
        )
    full_observation = Composite(
        {
            group: group_obs,
            "state": Bounded(
                torch.as_tensor(state_space.low),
                torch.as_tensor(state_space.high),
                torch.Size(state_space.shape),
                dtype=torch.float32,
            ),
            "is_init": Categorical(2, torch.Size([1]), dtype=torch.bool),
        }
    )
    full_action = Composite({group: Composite(action=action, shape=torch.Size([a]))})
    full_reward = Composite(
        {group: Composite(reward=Unbounded(torch.Size([a, 1])), shape=torch.Size([a]))}
    )
    flag = Categorical(2, torch.Size([1]), dtype=torch.bool)
    agent_flag = Categorical(2, torch.Size([a, 1]), dtype=torch.bool)
    full_done = Composite(
        {
            **{k: flag.clone() for k in FLAGS},
            group: Composite({k: agent_flag.clone() for k in FLAGS}, shape=torch.Size([a])),
        }
    )
    return Specs(full_observation, full_action, full_reward, full_done)
