"""The static cost model: predicted step time of the parallel executor at p threads.

From one measured serial step (the probe) and the machine's features it
predicts, for each pool size p,

    T(p) = T_s * (1 + omega) / S(p)  +  N * read / q  +  R * (N * list / q + barrier(p))
           +  dispatch(p)

- ``T_s``: serial step time; ``omega``: the parallel executor's extra work per
  event at one thread (per-entity inboxes and heaps instead of one heap).
- ``S(p) = q / (1 + q / w)``: speed-up of the work. ``q`` counts physical cores
  fully and SMT siblings at ``SMT_YIELD``; ``w`` is the work items of one
  round (events per round, at most the entities): with few items per round
  threads wait on the slowest one, and S saturates at ``w``.
- ``read``: the step's begin read of each of the ``N`` entities' queue lines
  (a cache miss each, ~25-60 ns measured at PCS 256x256), which fills the
  workers' wake calendars.
- ``R``: horizon rounds per step (``ceil(dt / lookahead)`` until a parallel
  run reports the real count); each round every worker lists its ready
  entities from its calendar (their cost is the work's) through a pass over
  one bit per entity of its slice (``list``), and crosses two spin barriers.
- ``dispatch(p)``: the pool wake-ups of a step (events, publish, observe).

The constants are measurements of the runtime's primitives (a spin barrier
across 2 threads 0.1-0.5 us, a contended CAS 13-55 ns per arrival). The model
does not have to be right, only good enough to rank: STPA measures the
candidates it keeps and chooses on measurements. See docs/stpa.md.
"""

from __future__ import annotations

import dataclasses
import math

BEGIN_READ_PER_ENTITY_S = 40e-9  # per entity per step: its queue line, a cache miss
LIST_PER_ENTITY_S = 0.02e-9  # per entity per round: its bit in the listing pass
OMEGA = 0.05  # parallel executor's extra cost per unit of serial work at 1 thread
SMT_YIELD = 0.25  # what an SMT sibling adds to a busy core
BARRIER_BASE_S = 0.3e-6  # one spin barrier, 2 threads
BARRIER_PER_THREAD_S = 0.04e-6  # each further arrival (a contended CAS + line transfer)
BARRIERS_PER_ROUND = 2
DISPATCHES_PER_STEP = 3  # pool.run calls of one step: events, publish, observe
DISPATCH_BASE_S = 0.5e-6
DISPATCH_PER_THREAD_S = 0.05e-6
HOPELESS_RATIO = 2.0  # predicted parallel/serial above this: do not even measure parallel
NEIGHBOUR_RATIO = 1.25  # also measure ladder sizes predicted within this of the optimum
MAX_PARALLEL_CANDIDATES = 4


@dataclasses.dataclass(frozen=True)
class Trace:
    """What the probe measured (per step) plus the model's static features."""

    seconds_per_step: float  # serial
    events_per_step: float
    cross_events_per_step: float
    rounds_per_step: float  # of the parallel executor (estimated or measured)
    num_entities: int
    num_agents: int
    lookahead_over_dt: float

    @property
    def seconds_per_event(self) -> float:
        """Serial time per event (the step's fixed work spread over its events)."""
        return self.seconds_per_step / max(1.0, self.events_per_step)

    @property
    def cross_fraction(self) -> float:
        """Share of events that crossed entities (went through an inbox)."""
        return self.cross_events_per_step / max(1.0, self.events_per_step)


def estimated_rounds(lookahead: float, dt: float) -> int:
    """Upper bound on rounds per step: each round advances the horizon by >= lookahead."""
    if lookahead >= dt:
        return 1
    return max(1, math.ceil(dt / lookahead))


def effective_threads(p: int, cores: int) -> float:
    """Threads' worth of throughput from p threads on ``cores`` physical cores."""
    return min(p, cores) + SMT_YIELD * max(0, p - cores)


def predict_seconds(trace: Trace, p: int, cores: int) -> float:
    """Predicted step time of the parallel executor with ``p`` threads."""
    rounds = max(1.0, trace.rounds_per_step)
    width = max(1.0, min(trace.events_per_step / rounds, float(trace.num_entities)))
    q = effective_threads(p, cores)
    speedup = q / (1.0 + (q - 1.0) / width) if q > 1 else q
    work = trace.seconds_per_step * (1.0 + OMEGA) / speedup
    begin = trace.num_entities * BEGIN_READ_PER_ENTITY_S / q
    listing = trace.num_entities * LIST_PER_ENTITY_S / q
    if p == 1:  # barriers and wake-ups with no one to wait for
        return work + begin + rounds * (listing + 0.1e-6) + DISPATCHES_PER_STEP * 0.1e-6
    barrier = BARRIER_BASE_S + BARRIER_PER_THREAD_S * (p - 2)
    dispatch = DISPATCH_BASE_S + DISPATCH_PER_THREAD_S * (p - 2)
    per_round = listing + BARRIERS_PER_ROUND * barrier
    return work + begin + rounds * per_round + DISPATCHES_PER_STEP * dispatch


def ladder(max_threads: int) -> list[int]:
    """Pool sizes STPA considers: powers of two up to ``max_threads``, and ``max_threads``."""
    sizes = []
    p = 1
    while p <= max_threads:
        sizes.append(p)
        p *= 2
    if sizes[-1] != max_threads:
        sizes.append(max_threads)
    return sizes


@dataclasses.dataclass(frozen=True)
class Plan:
    """Which parallel pool sizes to measure, and the predictions behind it."""

    measure: list[int]  # pool sizes of the parallel executor to measure
    predicted: dict[int, float]  # ladder size -> predicted seconds per step
    best: int  # predicted optimum
    reason: str


def plan(trace: Trace, max_threads: int, cores: int, *, serial_allowed: bool = True) -> Plan:
    """Prune the ladder to the sizes that might win.

    Keeps the predicted optimum, its ladder neighbours, and any size predicted
    within ``NEIGHBOUR_RATIO`` of it (at most ``MAX_PARALLEL_CANDIDATES``,
    nearest the optimum first). When even the optimum is predicted
    ``HOPELESS_RATIO`` times slower than serial, nothing parallel is measured.
    """
    sizes = ladder(max_threads)
    predicted = {p: predict_seconds(trace, p, cores) for p in sizes}
    best = min(sizes, key=lambda p: (predicted[p], p))
    ratio = predicted[best] / max(trace.seconds_per_step, 1e-12)
    if serial_allowed and ratio > HOPELESS_RATIO:
        return Plan([], predicted, best, f"predicted best parallel x{best} is {ratio:.1f}x serial")
    i = sizes.index(best)
    near = {best} | {sizes[j] for j in (i - 1, i + 1) if 0 <= j < len(sizes)}
    near |= {p for p in sizes if predicted[p] <= predicted[best] * NEIGHBOUR_RATIO}
    if max_threads > 2 and best > 1:
        near.discard(1)  # one parallel thread only wins against serial on tiny machines
    keep = sorted(near, key=lambda p: (abs(math.log2(p) - math.log2(best)), p))
    keep = sorted(keep[:MAX_PARALLEL_CANDIDATES])
    return Plan(keep, predicted, best, f"predicted optimum x{best} ({ratio:.2f}x serial time)")


def next_size(measured: dict[int, float], max_threads: int) -> int | None:
    """Hill-climb along the ladder: the next size beyond a best that sits at an edge.

    If the fastest measured size is the largest measured one, try the next
    larger ladder size; if it is the smallest (and > 1), the next smaller.
    """
    if not measured:
        return None
    sizes = ladder(max_threads)
    best = min(measured, key=lambda p: (measured[p], p))
    i = sizes.index(best) if best in sizes else None
    if i is None:
        return None
    if best == max(measured) and i + 1 < len(sizes) and sizes[i + 1] not in measured:
        return sizes[i + 1]
    if best == min(measured) and i > 0 and sizes[i - 1] not in measured:
        return sizes[i - 1]
    return None
