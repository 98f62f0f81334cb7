"""``Decision``: what STPA chose (executor, pool size) and its report."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Decision:
    """How to run: ``executor`` with ``num_threads``, and why (``report``, JSON-ready)."""

    executor: str
    num_threads: int
    report: dict


def fixed(executor: str, num_threads: int, source: str, reason: str, **extra) -> Decision:
    """A decision made without measuring (an override, or nothing to choose)."""
    report = {
        "choice": {"executor": executor, "num_threads": num_threads},
        "source": source,
        "reason": reason,
        **extra,
    }
    return Decision(executor, num_threads, report)
