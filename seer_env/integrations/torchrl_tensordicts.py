"""The batched TorchRL env's outputs: a reset's or step's arrays as tensors, then TensorDicts.

Outputs become tensors without per-agent Python work: ``torch.from_numpy`` over
fresh arrays (nothing the next step writes), and the TensorDicts are built from
entries that already have their specs' shapes and dtypes, with TensorDict's
private ``TensorDict._new_unsafe`` (no validation pass; pinned by the tests).
``_next_root`` builds what ``step_mdp`` would from the step's tensors (tested
equal, entry by entry).

``TensorDictBuilder`` is a part of ``SeerBatchedEnv``
(``seer_env.integrations.torchrl_batched``), which owns the attributes it reads.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase, is_tensor_collection


class StepTensors(NamedTuple):
    """One reset's or step's outputs as tensors of their own (no buffer the next step writes)."""

    observation: torch.Tensor  # float32 [m, a, obs_dim]
    mask: torch.Tensor  # bool [m, a]
    reward: torch.Tensor | None  # float32 [m, a, 1]; None for a reset
    info: dict[str, torch.Tensor]  # int64 [m, a] per info key (each TensorDict copies it)
    done: torch.Tensor  # bool [m, 1], as terminated and truncated
    terminated: torch.Tensor
    truncated: torch.Tensor
    agent_flags: tuple[torch.Tensor, ...]  # each agent's done, terminated, truncated [m, a, 1]
    state: torch.Tensor  # float32 [m, state_dim]
    is_init: torch.Tensor  # bool [m, 1]
    neighbours: torch.Tensor | None  # int64 [m, a, max_degree] when asked for
    any_done: bool  # done.any(), for maybe_reset


def shallow_copy(value: Any) -> Any:
    """A tensor as is, a nested TensorDict's structure copied (as ``step_mdp`` keeps them)."""
    if isinstance(value, torch.Tensor) or not is_tensor_collection(value):
        return value
    return value.copy()


class TensorDictBuilder:
    """``SeerBatchedEnv``'s outputs: tensors of a reset or step, its TensorDicts."""

    def _tensors(
        self,
        obs: np.ndarray,
        rewards: np.ndarray | None,
        alive: np.ndarray,
        all_alive: bool,
        flags: np.ndarray,
        any_done: bool,
        ended: np.ndarray | None = None,
    ) -> StepTensors:
        """A reset's or step's tensors from fresh arrays (nothing else holds them).

        ``ended``: bool ``[m * a]``, the agents whose episode ended at this step
        (None: none did). Their flags alone are set: an agent is done on the
        step it ends, not on the rows after (``mask`` False there).
        """
        m, a = self._group_size
        # Each agent's done, terminated, truncated: one fresh [3, m, a, 1] array.
        agent_flags = np.zeros((3, m, a, 1), dtype=bool)
        if ended is not None:
            ended = ended.reshape(m, a, 1)
            terminated = self._ends.terminated.reshape(m, a, 1)
            agent_flags[0] = ended
            np.logical_and(ended, terminated, out=agent_flags[1])
            np.greater(ended, terminated, out=agent_flags[2])  # ended and not terminated
        info: dict[str, torch.Tensor] = {}
        if self._info_keys:
            # One copy, key-major (the next step overwrites the buffer): each
            # key's [m, a] column is then one contiguous slice of it.
            table = self._vec.sim.infos.T.copy()
            if not all_alive:
                table[:, ~alive] = 0
            # Tensors of their own, not views (unbind): cheaper, and no view tracking.
            columns = table.reshape(-1, m, a)
            info = {key: torch.from_numpy(columns[k]) for k, key in enumerate(self._info_keys)}
        done, terminated, truncated, is_init = map(torch.from_numpy, flags)
        neighbours = None
        if self._neighbours:
            neighbours = self.neighbours()
            if self._static_neighbours is None and not all_alive:
                neighbours[~torch.from_numpy(alive.reshape(m, a))] = -1
        return StepTensors(
            observation=torch.from_numpy(obs.reshape(m, a, -1)),
            mask=torch.from_numpy(alive.reshape(m, a)),
            reward=(
                None
                if rewards is None
                else torch.from_numpy(rewards.astype(np.float32).reshape(m, a, 1))
            ),
            info=info,
            done=done,
            terminated=terminated,
            truncated=truncated,
            agent_flags=tuple(map(torch.from_numpy, agent_flags)),
            state=torch.from_numpy(self._vec.sim.states()),
            is_init=is_init,
            neighbours=neighbours,
            any_done=any_done,
        )

    def _group_entries(self, t: StepTensors) -> dict[str, Any]:
        """A new group TensorDict's observation entries (its own info TensorDict)."""
        group: dict[str, Any] = {"observation": t.observation, "mask": t.mask}
        if self._info_keys:
            group["info"] = TensorDict._new_unsafe(t.info, batch_size=self._group_size)
        if t.neighbours is not None:
            group["neighbours"] = t.neighbours
        group["done"], group["terminated"], group["truncated"] = t.agent_flags
        return group

    def _next_tensordict(self, t: StepTensors) -> TensorDictBase:
        """The TensorDict of one reset/step (``"next"`` of a step)."""
        group = self._group_entries(t)
        if t.reward is not None:
            group["reward"] = t.reward
        return TensorDict._new_unsafe(
            {
                self.group: TensorDict._new_unsafe(group, batch_size=self._group_size),
                "state": t.state,
                "is_init": t.is_init,
                "done": t.done,
                "terminated": t.terminated,
                "truncated": t.truncated,
            },
            batch_size=self.batch_size,
        )

    def _next_root(self, tensordict: TensorDictBase, t: StepTensors) -> TensorDictBase:
        """``step_mdp(tensordict)`` (as ``EnvBase.step_mdp``), built from the step's tensors.

        Kept from the input: every entry but ``"next"``, ``"_reset"``, the done
        flags and the group's reward (nested TensorDicts copied, tensors
        shared, as ``step_mdp`` does); the group's observation entries and the
        done flags are the step's.
        """
        g = self.group
        root: dict[str, Any] = {}
        group_in = None
        for key, value in tensordict.items():
            if key not in self._not_kept:
                root[key] = shallow_copy(value)
            elif key == g:
                group_in = value
        group = {}
        if group_in is not None:
            for key, value in group_in.items():
                if key not in self._group_replaced:
                    group[key] = shallow_copy(value)
        group.update(self._group_entries(t))
        root[g] = TensorDict._new_unsafe(group, batch_size=self._group_size)
        root["state"], root["is_init"] = t.state, t.is_init
        root["done"], root["terminated"], root["truncated"] = t.done, t.terminated, t.truncated
        return TensorDict._new_unsafe(root, batch_size=self.batch_size)
