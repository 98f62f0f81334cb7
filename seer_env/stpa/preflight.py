"""The preflight: a few steps of throw-away copies of a simulation, one per candidate.

Every copy starts from the same state (the probe's ``save()`` loaded into a
fresh ``Simulation``), is stepped with the same actions per step index, and
the copies take turns in short blocks. So at equal step indices every
candidate handles exactly the same events, and load from other processes
hits all candidates alike. The env's own simulation is never touched.

The one-thread candidates' steps also record the calling thread's CPU time:
a step that never sleeps and still ran for less CPU time than wall time was
preempted, which is how ``load.py`` tells a contended measurement apart.

With ``num_envs > 1`` (the vector env) every copy is a ``VectorSimulation``
of that many instances, stepped as one batch like the vector env steps: the
pool size that suits one small instance is often too small for a batch.
"""

from __future__ import annotations

import dataclasses
import statistics
import time

import numpy as np

from seer_env import _core
from seer_env.model_source import ModelSource, new_simulation, new_vector_simulation

# Idle pool workers spin this long (thread_pool.hpp kSpinMicros = 200 us) before
# parking; waiting it out keeps one candidate's spinning workers from stealing
# cores from the next candidate's block.
_POOL_SPIN_S = 300e-6


@dataclasses.dataclass(frozen=True, order=True)
class Candidate:
    """One way to run a step: an executor and its pool size."""

    num_threads: int
    executor: str

    @property
    def label(self) -> str:
        """``serial`` or ``parallel x4``."""
        return "serial" if self.executor == "serial" else f"{self.executor} x{self.num_threads}"


SERIAL = Candidate(1, "serial")


def preflight_actions(spec: dict, seed: int, step: int) -> np.ndarray:
    """Actions for step ``step``: sampled from the action space, fixed by ``(seed, step)``."""
    act, n = spec["action"], spec["num_agents"]
    rng = np.random.default_rng([seed, step])
    if act["discrete"]:
        if act["n"] <= 0 or n == 0:
            return np.zeros(n, dtype=np.int64)
        return rng.integers(0, act["n"], size=n, dtype=np.int64)
    low, high = float(act["low"]), float(act["high"])
    if not (np.isfinite(low) and np.isfinite(high)):
        return np.zeros((n, act["dim"]), dtype=np.float32)
    return rng.uniform(low, high, size=(n, act["dim"])).astype(np.float32)


def _decision_step(sim: _core.Simulation, actions: np.ndarray) -> tuple[float, dict]:
    """One step of a model whose agents ask (event-driven decisions).

    Each request is answered with its agent's row of ``actions``; the time is
    the whole step's, the answers' round trips included.
    """
    start = time.perf_counter()
    while sim.advance() == "decisions":
        agents, _ = sim.requests()
        while len(agents):
            sim.answer(actions[agents])
            agents, _ = sim.requests()
    return time.perf_counter() - start, sim.last_step


class Preflight:
    """Copies of one model+config, stepped in lockstep blocks, with their step times."""

    def __init__(
        self,
        model: ModelSource,
        config: dict,
        *,
        seed: int,
        event_budget: int = 50_000_000,
        num_envs: int = 1,
    ) -> None:
        self._model = model
        self._config = dict(config)
        self._seed = seed
        self._event_budget = event_budget
        self.num_envs = num_envs
        self._sims: dict[Candidate, _core.Simulation | _core.VectorSimulation] = {}
        self._step_index = 0  # step index every copy has reached
        self.samples: dict[Candidate, list[float]] = {}
        self.rounds: dict[Candidate, list[int]] = {}
        self.events: list[int] = []
        self.cross_events: list[int] = []
        self.spec: dict | None = None
        # Thread CPU time and wall time of the one-thread candidates' steps (load.py).
        self.run_cpu_s = 0.0
        self.run_wall_s = 0.0

    def _new(self, candidate: Candidate) -> _core.Simulation | _core.VectorSimulation:
        options = dict(
            executor=candidate.executor,
            num_threads=candidate.num_threads,
            event_budget=self._event_budget,
        )
        if self.num_envs == 1:
            return new_simulation(self._model, self._config, **options)
        return new_vector_simulation(self._model, self._config, self.num_envs, **options)

    def _step(self, sim, step: int) -> tuple[float, dict]:
        """Step ``sim`` with step ``step``'s actions; its time and stats (summed over instances)."""
        actions = preflight_actions(self.spec, self._seed, step)
        if self.num_envs == 1 and self.spec.get("decisions"):
            return _decision_step(sim, actions)
        if self.num_envs == 1:
            sim.step(actions)
            return sim.last_step["seconds"], sim.last_step
        return self._step_batch(sim, actions)

    def _timed_step(self, candidate: Candidate, step: int) -> tuple[float, dict]:
        """``_step`` of ``candidate``'s copy; one-thread steps count toward the run fraction."""
        sim = self._sims[candidate]
        if candidate.num_threads != 1:
            return self._step(sim, step)
        cpu, wall = time.thread_time(), time.perf_counter()
        out = self._step(sim, step)
        self.run_cpu_s += time.thread_time() - cpu
        self.run_wall_s += time.perf_counter() - wall
        return out

    def _step_batch(self, sim, actions: np.ndarray) -> tuple[float, dict]:
        """One batch step of a ``VectorSimulation``: every instance takes ``actions``."""
        m = self.num_envs
        batch = np.concatenate([actions] * m)
        steps = np.zeros(m, dtype=np.uint8)
        start = time.perf_counter()
        sim.step(batch, None, steps, np.zeros(m, dtype=np.uint64))
        seconds = time.perf_counter() - start
        per = [sim.last_step(i) for i in range(m)]
        stats = {k: sum(p[k] for p in per) for k in ("events", "cross_events")}
        stats["rounds"] = max(p["rounds"] for p in per)
        return seconds, stats

    def _reset(self, sim) -> None:
        if self.num_envs == 1:
            sim.reset(self._seed)
            return
        m = self.num_envs
        n = self.spec["num_agents"]
        act = self.spec["action"]
        shape = (m * n,) if act["discrete"] else (m * n, act["dim"])
        zeros = np.zeros(shape, dtype=np.int64 if act["discrete"] else np.float32)
        resets = np.ones(m, dtype=np.uint8)
        sim.step(zeros, None, resets, np.arange(self._seed, self._seed + m, dtype=np.uint64))

    def _save(self, sim) -> list[bytes]:
        return [sim.save()] if self.num_envs == 1 else [sim.save(i) for i in range(self.num_envs)]

    def _load(self, sim, blobs: list[bytes]) -> None:
        if self.num_envs == 1:
            sim.load(blobs[0])
            return
        for i, blob in enumerate(blobs):
            sim.load(i, blob)

    def start(self, candidate: Candidate, warmup: int = 1) -> float:
        """Start the first copy (``candidate``) from a reset; returns its last warm-up step time."""
        if self._sims:
            raise RuntimeError("Preflight.start() called twice")
        sim = self._new(candidate)
        self.spec = sim.spec
        self._reset(sim)
        self._sims[candidate] = sim
        self.samples[candidate] = []
        self.rounds[candidate] = []
        seconds = 0.0
        for _ in range(warmup):
            seconds, _ = self._step(sim, self._step_index)
            self._step_index += 1
        return seconds

    def probe(self, warmup: int = 1, timed: int = 2) -> float:
        """Start the serial copy; returns its median step time over ``timed`` steps."""
        self.start(SERIAL, warmup)
        times = []
        for _ in range(timed):
            seconds, last = self._timed_step(SERIAL, self._step_index)
            self._step_index += 1
            times.append(seconds)
            self.samples[SERIAL].append(seconds)
            self.events.append(last["events"])
            self.cross_events.append(last["cross_events"])
        return statistics.median(times)

    @property
    def steps(self) -> int:
        """Step index every copy has reached."""
        return self._step_index

    @property
    def candidates(self) -> list[Candidate]:
        """Candidates with a copy, in the order they were added."""
        return list(self._sims)

    def add(self, candidate: Candidate) -> None:
        """Start a copy for ``candidate`` at the current step index (from the first copy)."""
        if candidate in self._sims:
            return
        sim = self._new(candidate)
        self._load(sim, self._save(next(iter(self._sims.values()))))
        self._sims[candidate] = sim
        self.samples[candidate] = []
        self.rounds[candidate] = []

    def run_round(self, timed: int, order_shift: int = 0, wake: bool = True) -> None:
        """One block per candidate: wait out idle spinners, one warm-up step, ``timed`` steps.

        The order rotates by ``order_shift`` so no candidate always follows
        the same neighbour. ``wake=False`` skips the warm-up step (for steps
        long enough that waking a parked pool is lost in them; a new copy's
        first block always has it).
        """
        items = list(self._sims)
        k = order_shift % len(items)
        items = items[k:] + items[:k]
        untimed = 1 if wake or any(not self.samples[c] for c in items) else 0
        for candidate in items:
            time.sleep(_POOL_SPIN_S)
            for j in range(timed + untimed):
                seconds, last = self._timed_step(candidate, self._step_index + j)
                if j < untimed:
                    continue  # wakes the parked pool; not representative
                self.samples[candidate].append(seconds)
                self.rounds[candidate].append(last["rounds"])
                if candidate == SERIAL:
                    self.events.append(last["events"])
                    self.cross_events.append(last["cross_events"])
        self._step_index += timed + untimed

    def medians(self) -> dict[Candidate, float]:
        """Median step time of every candidate with samples."""
        return {c: statistics.median(s) for c, s in self.samples.items() if s}

    def upper_quartiles(self) -> dict[Candidate, float]:
        """Upper-quartile step time of every candidate with samples (risk-averse score)."""
        return {c: float(np.percentile(s, 75)) for c, s in self.samples.items() if s}

    def minimums(self) -> dict[Candidate, float]:
        """Fastest step time of every candidate with samples (its best moment under load)."""
        return {c: min(s) for c, s in self.samples.items() if s}

    def close(self) -> None:
        """Drop the copies (their pools join their workers)."""
        self._sims.clear()
