"""Moved to ``seer_env.workloads.aircraft_layout`` (kept for existing imports)."""

from seer_env.workloads.aircraft_layout import (
    MAX_NEIGHBOR_SLOTS,
    NEIGHBOR_DTYPE,
    NO_NEIGHBOR,
    UAV_STATE_DTYPE,
    uav_states,
)

__all__ = ["MAX_NEIGHBOR_SLOTS", "NEIGHBOR_DTYPE", "NO_NEIGHBOR", "UAV_STATE_DTYPE", "uav_states"]
