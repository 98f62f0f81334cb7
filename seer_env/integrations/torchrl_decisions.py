"""TorchRL's batched env for a model whose agents act when their events ask.

```python
from torchrl.envs.utils import check_env_specs
from seer_env.integrations.torchrl_decisions import make_decision_env

env = make_decision_env("pcs_admission_v0", num_envs=4, width=8, height=8, seed=0)
check_env_specs(env)
td = env.rollout(50)  # td["agents", "mask"]: the agents that acted at each step
```

An ``EnvBase`` over ``seer_env.vector.SeerDecisionVectorEnv`` (``make_batched_env``
routes a decision model here), ``batch_size=[num_envs]``. The agents form one
group (``"agents"``; ``group=`` renames it) with the batched env's layout
(``seer_env.integrations.torchrl_batched``, the same specs), and these meanings:

- ``observation``: ``float32[num_envs, n_agents, obs_dim]``; fresh in the rows
  of ``mask`` (each asked agent's observation at its request), and in every
  row at an instance's first and last return;
- ``mask``: ``bool[num_envs, n_agents]``, the agents that must act now
  (``needs_action``): the rows that count for the policy and the loss. The
  env uses the actions of those rows only and ignores the others;
- ``decision_time``: ``float64[num_envs, n_agents, 1]``, when each agent of
  ``mask`` asked (simulated time); NaN elsewhere;
- ``action_mask`` (only for a model that declares ``action_mask``):
  ``bool[num_envs, n_agents, n]``, True for the actions each agent may take
  (``SeerDecisionVectorEnv.action_masks``; ``MaskedCategorical(logits=...,
  mask=td[group, "action_mask"])`` samples only those). The action spec
  carries the same mask (``Categorical.update_mask``), so ``rand_action`` and
  ``rollout`` without a policy pick valid actions; the env refuses an action
  a mask forbids in a row of ``mask`` (ValueError; nothing steps);
- ``action``: ``int64[num_envs, n_agents]`` (Discrete) or
  ``float32[num_envs, n_agents, dim]`` (Box);
- ``reward``: ``float32[num_envs, n_agents, 1]``: what accrued for the agent
  since its previous return (``SeerDecisionEnv.step_arrays``), 0 in the rows
  not returned. An agent's reward therefore arrives with its *next*
  decision's observation and belongs to its previous decision (the example
  ``examples/torchrl_admission.py`` credits it so);
- ``done``, ``terminated``, ``truncated``: ``bool[num_envs, n_agents, 1]``,
  True for every agent at its instance's last return (``max_cycles``:
  truncated).

At the root: ``state`` (``float32[num_envs, state_dim]``), ``is_init``
(``bool[num_envs, 1]``: an instance's first return) and
``done``/``terminated``/``truncated`` (``[num_envs, 1]``) per instance. Done
instances reset through TorchRL's ``"_reset"`` (collectors and ``rollout`` do
it); stepping one without it restarts it (NEXT_STEP autoreset).

Every step returns to Python once per instance (the vector env steps its
instances one after another); the outputs become tensors with a fixed number
of calls per step, none per agent. The values are the vector env's bytes
(rewards cast to float32). ``env.set_seed(s)`` (or ``reset(seed=s)``) seeds
instance ``i`` of the next full reset with ``s + i``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Unbounded
from torchrl.envs import EnvBase

from seer_env.integrations.torchrl_specs import FLAGS, unbatched_specs
from seer_env.validation import validate_seed
from seer_env.vector.decisions import SeerDecisionVectorEnv

__all__ = ["SeerDecisionBatchedEnv", "make_decision_env"]

_ROOT_KEYS = frozenset({"next", "_reset", "state", "is_init", *FLAGS})


class SeerDecisionBatchedEnv(EnvBase):
    """``num_envs`` instances of a decision env as one batched TorchRL env (module docstring).

    Args:
        name: a decision env (``seer_env.env_names(decisions=True)``), a
            registered model that declares ``decisions``, or such a NumbaModel.
        num_envs: number of instances (the TorchRL batch size).
        group: the name of the agents' group (default ``"agents"``).
        device: torch device of the returned tensors (the env runs on CPU).
        **config: the env's own arguments (``seed``, ``max_cycles``, ...).
    """

    def __init__(
        self, name: Any, num_envs: int, *, group: str = "agents", device: Any = None, **config: Any
    ) -> None:
        if not isinstance(group, str) or not group or group in _ROOT_KEYS:
            raise ValueError(
                f"group must be a non-empty str other than {sorted(_ROOT_KEYS)}, got {group!r}"
            )
        vec = SeerDecisionVectorEnv(name, num_envs, **config)
        super().__init__(device=device, batch_size=torch.Size([vec.num_instances]))
        self._vec = vec
        self.env_name = name
        #: Agents per instance (``VmasEnv``'s name; ``num_agents`` is the same number).
        self.n_agents = self.num_agents = vec.agents_per_instance
        self.group = group
        #: TorchRL's group map: group -> one instance's agent names.
        self.group_map = {group: list(vec.possible_agents)}
        self._pending_seed: int | None = None
        m, n = vec.num_instances, self.n_agents
        self._group_size = torch.Size([m, n])
        self._action_key = (group, "action")
        self._make_specs()

    def _make_specs(self) -> None:
        vec = self._vec
        specs = unbatched_specs(
            vec.agents_per_instance,
            vec.single_agent_observation_space,
            vec.single_agent_action_space,
            vec.single_state_space,
            self.group,
            [],
        )
        observation = specs.observation
        observation[self.group]["decision_time"] = Unbounded(
            torch.Size([self.n_agents, 1]), dtype=torch.float64
        )
        if vec._masked:
            k = vec.single_agent_action_space.n
            observation[self.group]["action_mask"] = Binary(
                n=k, shape=torch.Size([self.n_agents, k]), dtype=torch.bool
            )
        self.full_observation_spec_unbatched = observation
        self.full_action_spec_unbatched = specs.action
        self.full_reward_spec_unbatched = specs.reward
        self.full_done_spec_unbatched = specs.done

    # -- EnvBase ------------------------------------------------------------------------------
    def _set_seed(self, seed: int | None) -> None:
        self._pending_seed = validate_seed(seed)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        seed = kwargs.pop("seed", None)
        kwargs.pop("set_state", None)
        if kwargs:
            raise ValueError(f"reset() got unexpected arguments {sorted(kwargs)}")
        vec = self._vec
        m = vec.num_instances
        reset = None if tensordict is None else tensordict.get("_reset", None)
        if reset is None or bool(reset.all()) or not vec._started:
            mask = np.ones(m, dtype=bool)
            if seed is None:
                seed, self._pending_seed = self._pending_seed, None
            obs, infos = vec.reset(seed=seed)
        else:
            mask = reset.reshape(m).cpu().numpy()
            obs, infos = vec.reset(options={"reset_mask": mask})
        # Instances not reset keep their flags: done while they wait for their reset.
        ended = vec._autoreset[:, None].copy()
        agent_ended = np.repeat(ended, self.n_agents, axis=1)[..., None]
        not_ended = np.zeros_like(agent_ended)
        return self._tensordict(obs, None, infos, not_ended, agent_ended, mask)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        action = tensordict.get(self._action_key, None)
        if action is None:
            raise ValueError(
                f"step(): the tensordict has no action at {self._action_key!r} "
                "(step a tensordict that holds the policy's action)"
            )
        if not isinstance(action, torch.Tensor):
            raise ValueError(f"the action at {self._action_key!r} must be a tensor")
        vec = self._vec
        restarting = vec._autoreset.copy()
        obs, rewards, terms, truncs, infos = vec.step(action.detach().cpu().numpy())
        out = self._tensordict(obs, rewards, infos, terms[..., None], truncs[..., None], restarting)
        return out

    def _tensordict(
        self,
        obs: np.ndarray,
        rewards: np.ndarray | None,
        infos: dict[str, np.ndarray],
        terminated: np.ndarray,
        truncated: np.ndarray,
        is_init: np.ndarray,
    ) -> TensorDictBase:
        """A reset's or step's TensorDict from the vector env's fresh arrays."""
        done = terminated | truncated
        group = {
            "observation": torch.from_numpy(obs),
            "mask": torch.from_numpy(infos["needs_action"]),
            "decision_time": torch.from_numpy(infos["decision_time"][..., None]),
            "done": torch.from_numpy(done),
            "terminated": torch.from_numpy(terminated),
            "truncated": torch.from_numpy(truncated),
        }
        if rewards is not None:
            group["reward"] = torch.from_numpy(rewards.astype(np.float32)[..., None])
        if self._vec._masked:
            masks = torch.from_numpy(self._vec.action_masks)
            group["action_mask"] = masks
            # The action spec samples valid actions only (rand_action, rollout without a policy).
            self.full_action_spec[self._action_key].update_mask(masks)
        root_terminated = terminated.all(axis=1)
        root_truncated = truncated.all(axis=1) & ~root_terminated
        out = TensorDict(
            {
                self.group: TensorDict(group, batch_size=self._group_size),
                "state": torch.from_numpy(self._vec.state()),
                "is_init": torch.from_numpy(np.asarray(is_init, dtype=bool).reshape(-1, 1)),
                "done": torch.from_numpy(root_terminated | root_truncated),
                "terminated": torch.from_numpy(root_terminated),
                "truncated": torch.from_numpy(root_truncated),
            },
            batch_size=self.batch_size,
        )
        if self.device is not None and self.device.type != "cpu":
            out = out.to(self.device)
        return out

    @property
    def vector_env(self) -> SeerDecisionVectorEnv:
        """The vector env underneath (its ``envs`` are the instances)."""
        return self._vec

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Release the vector env's threads."""
        self._vec.close()
        super().close(raise_if_closed=raise_if_closed)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(env={self.env_name!r}, num_envs={self.batch_size[0]}, "
            f"group={self.group!r}, n_agents={self.n_agents}, device={self.device})"
        )


def make_decision_env(name: Any, num_envs: int, **config: Any) -> SeerDecisionBatchedEnv:
    """``num_envs`` instances of decision env ``name`` as one batched TorchRL env."""
    return SeerDecisionBatchedEnv(name, num_envs, **config)
