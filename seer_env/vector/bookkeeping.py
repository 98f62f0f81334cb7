"""The vector env's books per instance, and settling a call that stopped midway.

The books (``Book``): each instance's episode seed, its steps since its reset,
whether it autoresets on the next step, which of its rows still act, and the
seeds an interrupted ``reset()`` left to use. A finished step or reset updates
them once (``_settle_step``, ``_settle_resets``: black death and autoreset
applied). A call stopped midway (an error, Ctrl-C at any point, ``close()``
with a step in flight) is settled from the runtime instead
(``_settle_interrupted``): from the books before the call, an instance the
runtime shows done keeps the call's work, every other one autoresets on the
next step.

``InstanceBookkeeping`` is a part of ``SeerVectorEnv`` (``seer_env.vector.sync``),
which owns the attributes these methods use.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

# What each instance does in a runtime call (the call's `modes`).
STEP, RESET, SKIP = 0, 1, 2


class Book(NamedTuple):
    """The env's bookkeeping before a call: what a call stopped midway starts over from."""

    episode_seeds: list[int | None]
    cycles: np.ndarray  # int64 per instance: steps since its reset
    autoreset: np.ndarray  # bool per instance: resets on the next step
    alive: np.ndarray  # uint8 per row: still acting
    reset_seeds: dict[int, int]  # the seed of a reset that an interrupted reset() left to do
    started: bool


class StepPlan(NamedTuple):
    """A step between its checks and its outputs (``step_async`` keeps it in flight)."""

    args: tuple  # (actions, alive, modes, seeds) for the C++ call
    resetting: np.ndarray  # instances that autoreset instead of stepping
    # Resetting instances the runtime holds at step 0 already: whether this
    # step reset them cannot be read back, so an interrupted step resets them again.
    fresh: np.ndarray
    before: Book


class ResetPlan(NamedTuple):
    """A checked ``reset()``: which instances reset, and with which seeds."""

    mask: np.ndarray  # bool per instance
    seeds: np.ndarray  # uint64 per instance (0 where not reset)
    fresh: np.ndarray  # masked instances at step 0 already (as in StepPlan)
    before: Book


def name_instance(exc: BaseException, instance: int) -> None:
    """Prefix ``exc``'s message with the failed instance and set ``exc.instance``."""
    exc.instance = instance
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (f"instance {instance}: {exc.args[0]}", *exc.args[1:])
    else:
        exc.args = (f"instance {instance}", *exc.args)


class InstanceBookkeeping:
    """``SeerVectorEnv``'s books: what a step or reset does to them, and settling a stopped call."""

    def _rows(self, instance_mask: np.ndarray) -> np.ndarray:
        return np.repeat(instance_mask, self.agents_per_instance)

    def _book(self, autoreset: np.ndarray, alive: np.ndarray) -> Book:
        """The bookkeeping now (``autoreset`` and ``alive``: copies of ours, made by the caller)."""
        return Book(
            list(self._episode_seeds),
            self._cycles.copy(),
            autoreset,
            alive,
            dict(self._reset_seeds),
            self._started,
        )

    def _restore(self, book: Book) -> None:
        self._episode_seeds = list(book.episode_seeds)
        self._cycles = book.cycles.copy()
        self._autoreset = book.autoreset.copy()
        self._alive = book.alive.copy()
        self._reset_seeds = dict(book.reset_seeds)
        self._started = book.started

    def _at_step_zero(self, instances: np.ndarray) -> np.ndarray:
        """Which of ``instances`` (bool mask) the runtime holds at step 0, not needing a reset."""
        fresh = np.zeros(self.num_instances, dtype=bool)
        for i in np.flatnonzero(instances):
            fresh[i] = self.sim.steps(i) == 0 and not self.sim.needs_reset(i)
        return fresh

    def _settle_resets(self, done: np.ndarray, seeds: np.ndarray) -> None:
        for i in np.flatnonzero(done):
            self._episode_seeds[i] = int(seeds[i])
            self._reset_seeds.pop(int(i), None)
        self._cycles[done] = 0
        self._autoreset[done] = False
        self._alive[self._rows(done)] = 1
        self._started = True

    def _live_rows(self) -> np.ndarray:
        """Rows whose actions the next step reads: live agents of instances that step."""
        return self._alive.view(bool) & ~self._rows(self._autoreset)

    def _run_step(self, call: Callable[..., None], step: StepPlan, *args: Any):
        """Run a C++ step call; ``(obs, rewards, terms, truncs)``.

        On a failure (KeyboardInterrupt too, before or after the call returns)
        the instances that completed the step keep its bookkeeping, the failed
        ones autoreset next, and the first failed instance is named.
        """
        self._unsettled = step
        try:
            call(*args)
            outputs = self._finish_step(step)
            self._unsettled = None
        except BaseException as exc:
            self._settle_interrupted(exc)
            raise
        return outputs

    def _finish_step(self, step: StepPlan):
        """The step's outputs as fresh arrays, with black death and autoreset applied."""
        obs = self.sim.observations.copy()
        rewards = self.sim.rewards.copy()
        terms, truncs, dead, reset_rows = self._settle_step(step)
        obs[dead] = 0
        rewards[dead | reset_rows] = 0.0
        return obs, rewards, terms, truncs

    def _settle_step(self, step: StepPlan, done: np.ndarray | None = None):
        """A step's bookkeeping for the instances in ``done`` (None: all).

        Applied once, to the bookkeeping before the step. Returns the batch's
        ``(terms, truncs, dead, reset_rows)``: flags with black death and
        autoreset applied, rows that were dead before the step and rows that
        reset in it.
        """
        resetting, seeds, was_alive = step.resetting, step.args[3], step.args[1]
        ok = np.ones(self.num_instances, dtype=bool) if done is None else done
        for i in np.flatnonzero(resetting & ok):
            self._episode_seeds[i] = int(seeds[i])
            self._reset_seeds.pop(int(i), None)
        self._cycles[~resetting & ok] += 1
        self._cycles[resetting & ok] = 0

        terms = self.sim.terminations.astype(bool)
        truncs = self.sim.truncations.astype(bool)
        truncs |= self._rows(self._cycles >= self.max_cycles)
        # Black death: rows dead before this step report nothing.
        reset_rows = self._rows(resetting)
        dead = ~was_alive.astype(bool) & ~reset_rows
        terms[dead | reset_rows] = False
        truncs[dead | reset_rows] = False

        alive = self._alive.copy()
        alive[reset_rows] = 1
        alive[terms | truncs] = 0
        ok_rows = self._rows(ok)
        self._alive[ok_rows] = alive[ok_rows]
        done_instances = ~alive.reshape(self.num_instances, -1).any(axis=1)
        autoreset = done_instances & ~resetting | self._autoreset & ~resetting
        self._autoreset[ok] = autoreset[ok]
        return terms, truncs, dead, reset_rows

    def _drop_pending(self) -> None:
        """Forget the step in flight (interrupted, or run by another process): all autoreset.

        Whether or not an instance completed it, its next step resets it with
        the seed the dropped step would have recorded: the same state either way.
        """
        step = self._unsettled if self._unsettled is not None else self._pending
        if step is not None:
            self._restore(step.before)
        self._autoreset[:] = True
        self._pending = None
        self._unsettled = None

    def _instance_progress(self) -> tuple[np.ndarray, np.ndarray]:
        """Each instance's ``(needs_reset, steps)`` in the runtime (failure path only)."""
        m = self.num_instances
        needs = np.fromiter((self.sim.needs_reset(i) for i in range(m)), dtype=bool, count=m)
        steps = np.fromiter((self.sim.steps(i) for i in range(m)), dtype=np.int64, count=m)
        return needs, steps

    def _settle_interrupted(self, exc: BaseException | None = None) -> None:
        """Settle the call in ``_unsettled`` (stopped midway) from the runtime; a no-op if none.

        A background step still in flight is interrupted first. Then, from the
        bookkeeping before the call: a stepping instance that completed the
        step (one step more, no reset needed) keeps it, one the runtime never
        reached is unchanged; a resetting instance the runtime demonstrably
        reset (at step 0 now, not before) keeps its reset. Every other
        instance autoresets on the next step with the seed this call chose (one
        that failed: with its next seed, as after any failure). ``exc`` is
        named after the first failed instance (``exc.instance``).
        """
        plan = self._unsettled
        if plan is None:
            return
        if self.sim.in_flight:
            self.sim.request_interrupt()
            with contextlib.suppress(BaseException):  # its failures are read back below
                self.sim.step_wait()
        self._restore(plan.before)
        needs, steps = self._instance_progress()
        if isinstance(plan, ResetPlan):
            done = plan.mask & ~needs & (steps == 0) & ~plan.fresh
            self._settle_resets(done, plan.seeds)
            redo = plan.mask & ~done
            for i in np.flatnonzero(redo & ~needs):
                self._reset_seeds[int(i)] = int(plan.seeds[i])
            if not plan.before.started:  # its checks may not be armed; no step ran since
                self.sim.check_next_steps(self._check_steps)
        else:
            resetting, cycles = plan.resetting, plan.before.cycles
            done = ~needs & np.where(resetting, (steps == 0) & ~plan.fresh, steps == cycles + 1)
            untouched = ~needs & ~resetting & (steps == cycles)
            self._settle_step(plan, done)
            redo = ~done & ~untouched
        self._autoreset |= redo
        self._pending = None
        self._unsettled = None
        if exc is not None:
            self._name_failure(exc, redo & needs)

    def _name_failure(self, exc: BaseException, failed: np.ndarray) -> None:
        """Name the first failed instance in ``exc`` (``exc.instance``), if any failed."""
        reported = [i for i in self.sim.failed_instances if failed[i]]
        first = reported or np.flatnonzero(failed).tolist()
        if first:
            name_instance(exc, self.instance_offset + int(first[0]))
