"""TorchRL: seer_env envs as ``torchrl.envs.PettingZooWrapper`` envs, or batched.

Two routes: ``make_env`` wraps one ParallelEnv in TorchRL's
``PettingZooWrapper`` (per-agent dicts, batch size ``[]``); ``make_batched_env``
(:mod:`seer_env.integrations.torchrl_batched`) steps ``num_envs`` instances in
one C++ call as an ``EnvBase`` with ``batch_size=[num_envs]``, the fast route.
For a model whose agents act when their events ask (``pcs_admission_v0``),
``make_batched_env`` gives a ``SeerDecisionBatchedEnv``
(:mod:`seer_env.integrations.torchrl_decisions`): the same layout, with
``mask`` = the agents that must act now and their ``decision_time``.

```python
from torchrl.envs.utils import check_env_specs
from seer_env.integrations.torchrl import make_env

env = make_env("pcs_v0", width=8, height=8, seed=0)
check_env_specs(env)
rollout = env.rollout(100, break_when_any_done=False)
rollout["next", "cell", "reward"].shape  # [100, 64, 1]
```

The wrapper groups agents by the prefix of their names (``cell_*``,
``uav_*``): one group per env, observations stacked as
``[..., num_agents, obs_dim]`` under ``(group, "observation")``. It is built
with:

- ``use_mask=True``: agents that leave ``agents`` (aircraft_v0 UAVs that
  crash) keep their rows, flagged ``False`` in ``(group, "mask")``;
- ``done_on_any=False``: the env is done when every agent is done;
- ``categorical_actions=True``: Discrete actions are integer indices;
- ``return_state=True``: ``env.state()`` under ``"state"``.

TorchRL sends an action for every agent, dead ones included; seer_env envs
reject actions for agents that are no longer live (a likely bug elsewhere),
so ``wrap`` puts :class:`LiveActionsOnly` between the two, which drops them.

Per-agent infos (``(group, "info", key)``) come from the env's info keys,
which are the same at reset and at every step, as TorchRL requires; their
integer counters arrive as ``float32``.
"""

from __future__ import annotations

import warnings
from typing import Any

from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper
from torchrl.envs import PettingZooWrapper

import seer_env
from seer_env.integrations.torchrl_batched import SeerBatchedEnv
from seer_env.integrations.torchrl_batched import make_batched_env as _make_lockstep_env
from seer_env.integrations.torchrl_decisions import SeerDecisionBatchedEnv
from seer_env.vector.decisions import declares_decisions

__all__ = [
    "LiveActionsOnly",
    "SeerBatchedEnv",
    "SeerDecisionBatchedEnv",
    "make_batched_env",
    "make_env",
    "wrap",
]


def make_batched_env(
    name: Any, num_envs: int, **config: Any
) -> SeerBatchedEnv | SeerDecisionBatchedEnv:
    """``num_envs`` instances of env ``name`` as one batched TorchRL env.

    A lockstep env gives a ``SeerBatchedEnv`` (``torchrl_batched``); a model
    whose agents act when their events ask, a ``SeerDecisionBatchedEnv``
    (``torchrl_decisions``).
    """
    if declares_decisions(name):
        return SeerDecisionBatchedEnv(name, num_envs, **config)
    return _make_lockstep_env(name, num_envs, **config)


class LiveActionsOnly(BaseParallelWrapper):
    """Pass on only the actions of live agents (TorchRL also sends the dead ones')."""

    def step(self, actions: dict):
        """Step the env with the actions of ``env.agents`` only."""
        return self.env.step({a: actions[a] for a in self.env.agents})


def wrap(env: ParallelEnv, **wrapper_kwargs: Any) -> PettingZooWrapper:
    """Wrap a seer_env ParallelEnv; ``wrapper_kwargs`` override the defaults above."""
    kwargs = {
        "use_mask": True,
        "done_on_any": False,
        "categorical_actions": True,
        "return_state": True,
    }
    kwargs.update(wrapper_kwargs)
    with warnings.catch_warnings():
        # TorchRL warns on every PettingZoo version but 1.24.3; ours (>= 1.24, tested
        # with 1.27) is covered by tests/integrations/test_torchrl.py.
        warnings.filterwarnings("ignore", "PettingZoo in TorchRL is tested", UserWarning)
        return PettingZooWrapper(env=LiveActionsOnly(env), **kwargs)


def make_env(name: str, *, wrapper_kwargs: dict | None = None, **config: Any) -> PettingZooWrapper:
    """``seer_env.make(name, **config)`` wrapped for TorchRL.

    Args:
        name: env name (``seer_env.env_names()``).
        wrapper_kwargs: extra ``PettingZooWrapper`` arguments (e.g. ``device``).
        **config: the env's own arguments (``seed``, ``num_threads``, ...).
    """
    return wrap(seer_env.make(name, **config), **(wrapper_kwargs or {}))
