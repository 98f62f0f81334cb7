"""The ``num_threads`` option: parsing, the executor it implies, the oversubscription warning."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

from seer_env import _core
from seer_env.stpa import hardware

AUTO = "auto"
ENV_VAR = "SEER_NUM_THREADS"  # an int or "auto": overrides every env's num_threads choice


def parse_num_threads(
    value: Any, name: str = "num_threads", *, from_environment: bool = False
) -> int | str:
    """Return ``"auto"`` or an int in [1, max_num_threads()]; ValueError naming ``name``.

    The range is the runtime's, read from it with its text
    (``seer_env._core.max_num_threads()``: 8 per usable CPU, at least 64). The
    only string an argument may be is ``"auto"`` (``num_threads="4"`` is a
    ValueError, as for every other integer option); an environment variable
    (``from_environment``) is text, so there an integer string is read as its int.
    """
    if isinstance(value, str):
        if value.strip().lower() == AUTO:
            return AUTO
        if not from_environment:
            raise ValueError(f'{name} must be "auto" or an integer, got {value!r}')
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError(f'{name} must be "auto" or an integer, got {value!r}') from None
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ValueError(f'{name} must be "auto" or an integer, got {value!r}')
    value = int(value.__index__())
    if not 1 <= value <= _core.max_num_threads():
        raise ValueError(f'{name} must be "auto" or in {_core.num_threads_range()}, got {value}')
    return value


def default_executor(num_threads: int) -> str:
    """The executor an explicit pool size means when no executor is named."""
    return "serial" if num_threads == 1 else "parallel"


class OversubscriptionWarning(RuntimeWarning):
    """An explicit pool larger than the CPUs this process may use."""


def _user_stacklevel() -> int:
    """``stacklevel`` for a warning raised here that names the first caller outside seer_env."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1  # level 1: the function calling warnings.warn
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def warn_if_oversubscribed(num_threads: int) -> None:
    """Warn when ``num_threads`` exceeds the usable CPUs (affinity, cgroup quota).

    Workers spin at every round's barrier; with more of them than CPUs they
    are preempted mid-round and a step can take several times longer (PCS
    64x64 on 2 CPUs: 4 threads 4-6x slower than 2).
    """
    usable = hardware.usable_threads()
    if num_threads > usable:
        warnings.warn(
            f"num_threads={num_threads} exceeds the {usable} CPU(s) this process may use: "
            "worker threads spin at every round's barrier and get preempted, so steps "
            f'can be several times slower. Use num_threads="auto" or at most {usable}.',
            OversubscriptionWarning,
            stacklevel=_user_stacklevel(),
        )
