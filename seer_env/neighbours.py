"""The neighbour structure of the built-in envs, as index arrays for graph policies.

Every env that has one returns it as a padded table ``int64[num_agents,
max_degree]``: row ``j`` lists the agent indices (into ``possible_agents``)
that agent ``j`` interacts with, ``-1`` in the unused slots. The same table
comes from ``env.neighbours()``, ``SeerVectorEnv.neighbours()`` (one table per
instance, stacked) and the batched TorchRL env (``(group, "neighbours")``).

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

__all__ = ["NeighbourRule", "heard_neighbours", "rule_for", "torus_neighbours"]

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


def rule_for(env) -> NeighbourRule | None:
    """The neighbour rule of a built-in env (``PcsEnv``, ``AircraftEnv``), else None."""
    from seer_env.envs.aircraft import UAV_STATE_DTYPE, AircraftEnv
    from seer_env.envs.pcs import PcsEnv

    config = env._model_config
    if isinstance(env, PcsEnv):
        return NeighbourRule(4, static=torus_neighbours(config["width"], config["height"]))
    if isinstance(env, AircraftEnv):
        slots, timeout = int(config["max_neighbors"]), float(config["neighbor_timeout"])
        # A partial of a module function, not a closure: the vector env pickles its rule.
        read = functools.partial(_heard_from_bytes, UAV_STATE_DTYPE, slots, timeout)
        return NeighbourRule(slots, from_states=read)
    return None


def _heard_from_bytes(dtype: np.dtype, slots: int, timeout: float, raw: np.ndarray) -> np.ndarray:
    return heard_neighbours(raw.view(dtype)[:, 0], slots, timeout)
