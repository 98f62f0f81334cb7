"""Action masks: which actions an agent may take now, for models that declare ``action_mask``.

A model whose agents' valid actions vary (a Discrete action space) declares
``action_mask`` and says which are valid (C++ ``Model::action_mask``,
``PythonModel.valid_actions``). The runtime computes the masks where it
computes observations and refuses an action a mask forbids, naming the agent,
the action and the valid ones, before anything runs. The envs expose them:

- the dict API follows PettingZoo's convention: an observation is
  ``{"observation": obs_row, "action_mask": int8 row}`` and
  ``observation_space(agent)`` is ``Dict({"observation": Box,
  "action_mask": MultiBinary(n)})``;
- the array paths keep plain observation arrays and add ``env.action_masks``
  (bool, one row per agent).

A model without the declaration has neither: no mask is invented where every
action is valid.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium import spaces

__all__ = ["check_masked_actions", "masked_observation_space", "with_masks"]


def masked_observation_space(observation: spaces.Box, n: int) -> spaces.Dict:
    """PettingZoo's space of a masked observation: ``Dict(observation, action_mask)``."""
    return spaces.Dict({"observation": observation, "action_mask": spaces.MultiBinary(n)})


def with_masks(
    observations: dict[str, np.ndarray], masks: np.ndarray, rows: dict[str, int]
) -> dict[str, dict[str, np.ndarray]]:
    """Each agent's observation as ``{"observation", "action_mask"}`` (int8: ``sample(mask=)``).

    ``masks``: bool ``[num_agents, n]`` by row; ``rows``: each agent's row.
    """
    int8 = masks.astype(np.int8)
    return {a: {"observation": o, "action_mask": int8[rows[a]]} for a, o in observations.items()}


def check_masked_actions(
    masks: np.ndarray,
    actions: np.ndarray,
    acting: np.ndarray | None,
    name_of: Callable[[int], str],
) -> None:
    """ValueError naming the first acting row whose action its mask forbids.

    Args:
        masks: bool ``[rows, n]``.
        actions: int ``[rows]``, each in ``[0, n)`` (checked before).
        acting: bool ``[rows]``: the rows whose actions are used (None: all).
        name_of: a row's name in the message (called only on a refusal).
    """
    actions = np.asarray(actions, dtype=np.int64).reshape(-1)
    # Rows that do not act may hold anything: clipped, they index safely.
    allowed = masks[np.arange(len(actions)), np.clip(actions, 0, masks.shape[1] - 1)]
    bad = ~allowed if acting is None else acting & ~allowed
    if not bad.any():
        return
    row = int(np.flatnonzero(bad)[0])
    valid = np.flatnonzero(masks[row]).tolist()
    raise ValueError(
        f"action {int(actions[row])} of {name_of(row)} is not valid now: its action mask "
        f"allows {valid}"
    )
