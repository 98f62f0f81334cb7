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


def start_as_decided(sim, report: dict | None) -> None:
    """Start ``sim``'s pool on one thread if the decision's ``report`` says so.

    What a runtime does after switching to a decision's executor: a pool
    chosen on busy CPUs carries ``start_on_one_thread`` (``chooser``).
    ``sim`` is a ``Simulation`` or ``VectorSimulation``.
    """
    why = (report or {}).get("start_on_one_thread")
    if why is not None:
        sim.start_on_one_thread(why)
