"""The runtime's executors as benchmark cases: serial, parallel x1..n, locked, barrier, auto.

Every workload supplies one factory ``make(executor, threads) -> Case``; this
module decides which (executor, threads) pairs a group compares and builds
the ``auto`` case from a fresh STPA decision (cache off, so the preflight
runs here and now, as a first-time user's would).
"""

from __future__ import annotations

from collections.abc import Callable

import seer_env
from bench.timing import Case
from seer_env import stpa
from seer_env.stpa.cache import DecisionCache
from seer_env.stpa.decision import start_as_decided
from seer_env.stpa.hardware import usable_threads

CaseFactory = Callable[[str, int], Case]


def thread_counts() -> list[int]:
    """1, 2, 4, ... up to the usable CPUs (always including that count)."""
    n = usable_threads()
    counts = [1]
    while counts[-1] * 2 <= n:
        counts.append(counts[-1] * 2)
    if counts[-1] != n:
        counts.append(n)
    return counts


def executor_variants(
    engines: bool = True, counts: tuple[int, ...] | None = None
) -> list[tuple[str, int]]:
    """(executor, threads): serial, parallel at each count, the comparison executors at the top.

    ``counts``: the parallel thread counts (default: ``thread_counts()``).
    """
    counts = tuple(counts) if counts is not None else tuple(thread_counts())
    variants = [("serial", 1)] + [("parallel", t) for t in counts]
    if engines:
        top = thread_counts()[-1]
        for name in seer_env.executor_names():
            if name not in ("serial", "parallel"):
                variants.append((name, top))
    return variants


def case_name(executor: str, threads: int) -> str:
    """``serial`` or ``<executor>-<threads>``."""
    return "serial" if executor == "serial" else f"{executor}-{threads}"


def executor_cases(
    make: CaseFactory,
    model: str,
    model_config: dict,
    engines: bool = True,
    counts: tuple[int, ...] | None = None,
) -> list[Case]:
    """One case per executor variant, then ``auto`` (STPA's choice, decided now).

    ``engines``: include the comparison executors (``locked``, ``barrier``);
    ``counts``: the parallel thread counts (default: 1, 2, 4, ... usable).
    """
    cases = []
    for executor, threads in executor_variants(engines, counts):
        case = make(executor, threads)
        case.name = case_name(executor, threads)
        case.meta.update(kind="executor", executor=executor, threads=threads)
        # Every executor case, serial too, gets the untimed first step of a
        # turn (not only thread pools, which need it to wake their workers):
        # that step runs with cold caches after the other cases and, on a busy
        # machine, with the scheduler's credit for a thread that just slept
        # (the settle sleep), so timing it for serial alone favoured serial.
        case.wake = True
        cases.append(case)
    decision = stpa.choose(model, model_config, cache=DecisionCache(None))
    case = make(decision.executor, decision.num_threads)
    start_as_decided(case.sim, decision.report)
    case.name = "auto"
    case.meta.update(
        kind="auto",
        executor=decision.executor,
        threads=decision.num_threads,
        choice=case_name(decision.executor, decision.num_threads),
        preflight_s=decision.report.get("preflight_seconds"),
        stpa_reason=decision.report.get("reason"),
        stpa_load=decision.report.get("load"),  # what STPA saw of the machine's load
    )
    case.wake = True  # as every executor case
    cases.append(case)
    return cases
