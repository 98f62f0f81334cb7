"""The neighbour structure of an env, as index arrays for graph policies.

An env that has one says how it is made (``env.neighbour_rule()``, a
``NeighbourRule``; None for none) and returns it as a padded table
``int64[num_agents, max_degree]``: row ``j`` lists the agent indices (into
``possible_agents``) that agent ``j`` interacts with, ``-1`` in the unused
slots. The same table comes from ``env.neighbours()``, ``SeerVectorEnv.neighbours()`` (one table per
instance, stacked) and the batched TorchRL env (``(group, "neighbours")``).

The built-in envs' rules are made of the pieces below:

- **pcs**: the torus adjacency, four neighbours per cell in the order of the
  observation's neighbour entries (x-1, x+1, y-1, y+1; cell = y * width + x).
  It never changes (``NeighbourRule.static``): reading it costs nothing.
- **aircraft**: each UAV's neighbour table, the UAVs it has *heard* (a beacon
  at most ``neighbor_timeout`` seconds old, as its observation uses), in
  table-slot order, ``max_neighbors`` slots; all ``-1`` for a crashed UAV. It
  changes every step and is read from the entity states.

A PyTorch Geometric style ``edge_index`` (``[2, E]``, source -> target) is
``src, slot = np.nonzero(table >= 0); np.stack([table[src, slot], src])``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import numpy as np

__all__ = ["NeighbourRule", "heard_neighbours", "torus_neighbours"]

_NO_NEIGHBOUR = 0xFFFFFFFF  # kNoNeighbor, cpp/models/aircraft/aircraft.hpp


@dataclasses.dataclass(frozen=True)
class NeighbourRule:
    """How one env instance's neighbour table is made.

    Attributes:
        max_degree: columns of the table.
        static: the table, when it never changes (read-only), else None.
        from_states: the table from an instance's entity state bytes
            (``uint8[num_entities, state_size]``), when it changes.
    """

    max_degree: int
    static: np.ndarray | None = None
    from_states: Callable[[np.ndarray], np.ndarray] | None = None


@functools.lru_cache(maxsize=16)  # read-only, so one table serves every caller
def torus_neighbours(width: int, height: int) -> np.ndarray:
    """``int64[width * height, 4]``: cells x-1, x+1, y-1, y+1 of each cell on the torus."""
    y, x = np.divmod(np.arange(width * height, dtype=np.int64), width)
    table = np.stack(
        [
            y * width + (x - 1) % width,
            y * width + (x + 1) % width,
            ((y - 1) % height) * width + x,
            ((y + 1) % height) * width + x,
        ],
        axis=1,
    )
    table.flags.writeable = False
    return table


def heard_neighbours(states: np.ndarray, max_neighbors: int, timeout: float) -> np.ndarray:
    """``int64[num_uavs, max_neighbors]``: the UAVs each UAV has heard (``-1``: empty).

    Args:
        states: the UAV states as ``seer_env.envs.aircraft.UAV_STATE_DTYPE`` records.
        max_neighbors: the table slots in use (the model's ``max_neighbors``).
        timeout: entries older than this many seconds are no longer heard.
    """
    table = states["table"][:, :max_neighbors]
    ids = table["id"].astype(np.int64)
    age = states["t_state"][:, None] - table["t_heard"]
    heard = (ids != _NO_NEIGHBOUR) & (age <= timeout) & (states["alive"] != 0)[:, None]
    return np.where(heard, ids, -1)
