"""The byte layout of aircraft_v0's C++ entity state, for NumPy.

``UAV_STATE_DTYPE`` is ``UavState`` of ``cpp/models/aircraft/aircraft.hpp``
field for field (the C++ side static_asserts the size; ``uav_states`` checks
it at run time). The env's renderer and the NumPy reference read it.
"""

from __future__ import annotations

import numpy as np

MAX_NEIGHBOR_SLOTS = 32
NO_NEIGHBOR = 0xFFFFFFFF

NEIGHBOR_DTYPE = np.dtype(
    [
        ("id", "<u4"),
        ("pad", "<u4"),
        ("pos", "<f8", (3,)),
        ("vel", "<f8", (3,)),
        ("t_heard", "<f8"),
    ]
)

# The C++ UavState record, byte for byte (cpp/models/aircraft/aircraft.hpp).
UAV_STATE_DTYPE = np.dtype(
    [
        ("body", "<f8", (13,)),
        ("goal", "<f8", (3,)),
        ("cmd", "<f8", (4,)),
        ("thrust_acc", "<f8"),
        ("power", "<f8"),
        ("energy", "<f8"),
        ("energy_step", "<f8"),
        ("t_step", "<f8"),
        ("t_state", "<f8"),
        ("prev_goal_dist", "<f8"),
        ("near_misses_total", "<u8"),
        ("beacons_total", "<u8"),
        ("alive", "<u4"),
        ("crash_cause", "<u4"),
        ("crashed_step", "<u4"),
        ("near_misses_step", "<u4"),
        ("beacons_step", "<u4"),
        ("pad", "<u4"),
        ("table", NEIGHBOR_DTYPE, (MAX_NEIGHBOR_SLOTS,)),
    ]
)
assert UAV_STATE_DTYPE.itemsize == 2304


def uav_states(sim) -> np.ndarray:
    """The C++ entity states of an aircraft ``Simulation`` as a ``UAV_STATE_DTYPE`` array."""
    raw = sim.entity_states()
    if raw.shape[1] != UAV_STATE_DTYPE.itemsize:
        raise ValueError(
            f"entity state size {raw.shape[1]} != UAV_STATE_DTYPE.itemsize "
            f"{UAV_STATE_DTYPE.itemsize}: the layouts disagree"
        )
    return np.ascontiguousarray(raw).view(UAV_STATE_DTYPE).reshape(-1)
