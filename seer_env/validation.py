"""Argument validation shared by the envs, the vector env and the references.

Each validator returns the value in its canonical type or raises ValueError
naming the argument and the value it got.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SEED_LIMIT = 2**64  # seeds are uint64: [0, 2**64)


def validate_seed(seed: Any, name: str = "seed") -> int | None:
    """Return ``seed`` as an int in [0, 2**64), or None; ValueError otherwise."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise ValueError(f"{name} must be None or an integer in [0, 2**64), got {seed!r}")
    value = int(seed.__index__())
    if not 0 <= value < SEED_LIMIT:
        raise ValueError(f"{name} must be None or an integer in [0, 2**64), got {value}")
    return value


def validate_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Return ``value`` as an int in [low, high]; ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value.__index__())
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def validate_real(
    name: str, value: Any, low: float, high: float = float("inf"), *, low_open: bool = False
) -> float:
    """Return ``value`` as a finite float in [low, high] ((low, high] if low_open)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    below = value <= low if low_open else value < low
    if not np.isfinite(value) or below or value > high:
        bracket = "(" if low_open else "["
        raise ValueError(f"{name} must be a finite number in {bracket}{low}, {high}], got {value}")
    return value


def validate_reset_options(options: Any, configuration: Any = ()) -> dict:
    """``reset(options=...)``: None or a dict; ValueError for a key of the env's configuration.

    An env's configuration is fixed when it is built: ``options={"width": 8}``
    was ignored without a word. Other keys pass (PettingZoo's API test resets
    with options of its own, which an env may ignore).

    Args:
        options: what ``reset`` was given.
        configuration: the names of the env's parameters and runtime options.
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"options must be None or a dict, got {options!r}")
    fixed = sorted(str(k) for k in options if k in configuration)
    if fixed:
        raise ValueError(
            f"options: {fixed} belong to the env's configuration, fixed when the env is built: "
            "make a new env to change them"
        )
    return options
