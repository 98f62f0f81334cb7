"""The kit's own arguments, checked: a check that compares nothing must not pass.

``seeds=()``, ``threads=()``, ``steps=0`` or ``executors=("serial",)`` would
make a check run no comparison at all and report success ("0 runs", "0
seeds, 0 steps: no violations"); each is a ``ValueError`` naming the
argument and the value instead.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence

import numpy as np


def _shown(value: object, items: list) -> str:
    """``value`` as the caller wrote it; a one-shot iterable as the items it gave."""
    return repr(value) if isinstance(value, (list, tuple, range)) else repr(items)


def _is_int(value: object) -> bool:
    """An integer (NumPy's too), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def seed_list(seeds: Iterable[int]) -> list[int]:
    """``seeds`` as a list (a generator is read once); ValueError when it names none."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds must be an iterable of integer seeds, got {seeds!r}")
    items = list(seeds)
    if not items:
        raise ValueError(f"seeds must name at least one seed, got {_shown(seeds, items)}")
    return items


def step_count(steps: object) -> int:
    """``steps``, checked to be an integer >= 1 (0 steps would compare the reset only)."""
    if not _is_int(steps) or steps < 1:
        raise ValueError(f"steps must be an int >= 1, got {steps!r}")
    return int(steps)


def thread_counts(threads: Sequence[int]) -> list[int]:
    """``threads`` as a list of integers >= 1; ValueError when it names none."""
    if isinstance(threads, (str, bytes)) or not isinstance(threads, Iterable):
        raise ValueError(f"threads must be a sequence of thread counts, got {threads!r}")
    items = list(threads)
    if not items:
        raise ValueError(
            f"threads must name at least one thread count, got {_shown(threads, items)}"
        )
    for n in items:
        if not _is_int(n) or n < 1:
            raise ValueError(f"threads must hold integers >= 1, got {n!r} in {items!r}")
    return [int(n) for n in items]


def compared_executors(executors: Sequence[str] | None, all_names: Sequence[str]) -> list[str]:
    """The executors to compare with serial: ``executors`` (None: ``all_names``) minus serial.

    ValueError when none is left: serial is the reference, comparing it with
    itself alone would test nothing.
    """
    if executors is None:
        names = list(all_names)
    elif isinstance(executors, (str, bytes)) or not isinstance(executors, Iterable):
        raise ValueError(f"executors must be None or a sequence of names, got {executors!r}")
    else:
        names = list(executors)
    compared = [e for e in names if e != "serial"]
    if not compared:
        raise ValueError(
            "executors must name at least one executor besides 'serial' (the reference every "
            f"other executor is compared with; None: all of {list(all_names)}), got "
            f"{_shown(executors, names)}"
        )
    return compared
