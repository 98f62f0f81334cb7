"""PHOLD in pure Python: the same model as ``cpp/models/phold``, for tests.

A serial heapq event loop in the contract's key order ``(time, source, seq)``,
drawing from the same per-entity Philox streams (``seer_env.testing.rng``). It counts
what the C++ model counts, so tests can check the runtime's event counts
against an independent implementation.
"""

from __future__ import annotations

import heapq

import numpy as np

from seer_env.testing.rng import EntityRng


class PholdReference:
    """PHOLD with the C++ model's parameters and defaults."""

    def __init__(
        self,
        num_entities: int = 1024,
        population: int = 1,
        remote: float = 0.25,
        mean: float = 1.0,
        lookahead: float = 0.1,
        dt: float = 1.0,
    ) -> None:
        self.num_entities = num_entities
        self.population = population
        self.remote = remote
        self.mean = mean
        self.lookahead = lookahead
        self.dt = dt

    def reset(self, seed: int) -> None:
        """Start over: streams keyed (seed, entity), initial tokens at L + exp(mean)."""
        n = self.num_entities
        self.rngs = [EntityRng(seed, e) for e in range(n)]
        self.seq = [0] * n
        self.processed = np.zeros(n, dtype=np.uint64)
        self.queue: list[tuple[float, int, int, int]] = []  # (time, source, seq, target)
        self.steps = 0
        for e in range(n):
            for _ in range(self.population):
                self._schedule(e, e, self.lookahead + self.rngs[e].exponential(self.mean))

    def _schedule(self, source: int, target: int, time: float) -> None:
        heapq.heappush(self.queue, (time, source, self.seq[source], target))
        self.seq[source] += 1

    def run_until(self, t: float) -> None:
        """Process every step window [k dt, (k+1) dt) until the clock reaches t."""
        while self.steps * self.dt < t:
            self.steps += 1
            t_end = self.steps * self.dt
            while self.queue and self.queue[0][0] < t_end:
                now, _, _, e = heapq.heappop(self.queue)
                self.processed[e] += 1
                rng = self.rngs[e]
                target = e
                if self.num_entities > 1 and rng.uniform() < self.remote:
                    pick = rng.below(self.num_entities - 1)
                    target = pick + 1 if pick >= e else pick
                self._schedule(e, target, now + (self.lookahead + rng.exponential(self.mean)))

    @property
    def events_processed(self) -> int:
        """Events handled since reset."""
        return int(self.processed.sum())
