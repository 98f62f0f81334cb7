"""Random interleavings of vector env calls, checked against a serial model.

The env under test (a SeerVectorEnv, or a SeerAsyncVectorEnv of 2 batches, on a
given executor) receives a sequence of calls: ``reset``, ``step``,
``step_async`` (every batch or one), ``step_wait`` (every batch or one),
``close``, some with an out-of-space action. The model is one plain serial
SeerVectorEnv per batch, stepped with the same completed calls; it predicts
which calls are refused (RuntimeError for call order, ValueError for a bad
action: the env must then change nothing) and every output, compared byte for
byte. A ``close()`` with a step in flight drops that step: the model's
instances of that batch then autoreset on their next step.

Used by ``tests/vector/test_vector_call_interleavings.py`` and by
``make fuzz`` (``tools/fuzz.py``).
"""

import numpy as np
from hypothesis import strategies as st

from seer_env import vector

NUM_INSTANCES = 4
CONFIG = dict(width=2, height=2, max_cycles=3, seed=11, check_steps=1)
EXECUTORS = [("serial", 1), ("parallel", 2)]

_BATCH = st.one_of(st.none(), st.integers(0, 1))
_ACTIONS = st.tuples(st.integers(0, 2**32 - 1), st.one_of(st.none(), st.integers(0, 63)))
CALLS = st.lists(
    st.one_of(
        st.tuples(st.just("reset"), st.one_of(st.none(), st.integers(0, 2**64 - 1))),
        st.tuples(st.just("step"), _ACTIONS),
        st.tuples(st.just("step_async"), _BATCH, _ACTIONS),
        st.tuples(st.just("step_wait"), _BATCH),
        st.tuples(st.just("close")),
    ),
    max_size=24,
)


def _same(a, b):
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _concat(parts):
    """Batch results (tuples of arrays and an info dict) joined in row order."""
    first = parts[0]
    if isinstance(first, np.ndarray):
        return np.concatenate(parts)
    if isinstance(first, dict):
        return {k: np.concatenate([p[k] for p in parts]) for k in first}
    return tuple(_concat([p[k] for p in parts]) for k in range(len(first)))


class VectorCalls:
    """One env under test and its serial model; ``call(...)`` applies one call to both."""

    def __init__(self, kind: str, executor: tuple[str, int]) -> None:
        name, threads = executor
        cfg = dict(CONFIG, executor=name, num_threads=threads)
        self.is_async = kind == "async"
        if self.is_async:
            self.env = vector.make_async("pcs_v0", NUM_INSTANCES, num_batches=2, **cfg)
        else:
            self.env = vector.make("pcs_v0", NUM_INSTANCES, **cfg)
        self.num_batches = 2 if self.is_async else 1
        size = NUM_INSTANCES // self.num_batches
        model_cfg = dict(CONFIG, executor="serial")
        self.models = [
            vector.make("pcs_v0", size, **dict(model_cfg, seed=CONFIG["seed"] + b * size))
            for b in range(self.num_batches)
        ]
        self.rows_per_batch = self.models[0].num_envs
        self.in_flight: list[np.ndarray | None] = [None] * self.num_batches
        self.started = False
        self.log: list[tuple] = []  # the calls made, for a failure's report

    # -- the model's predictions ----------------------------------------------------------------
    def _actions(self, spec, rows: int, offset: int = 0):
        """Random valid actions, or one out-of-space row; and whether that row is read."""
        seed, bad_row = spec
        actions = np.random.default_rng(seed).integers(0, 11, size=rows)
        if bad_row is None:
            return actions, False
        bad_row %= rows
        actions[bad_row] = 99
        global_row = offset + bad_row
        b, r = divmod(global_row, self.rows_per_batch)
        return actions, bool(self.started and self.models[b]._live_rows()[r])

    def _batches(self, batch):
        return range(self.num_batches) if batch is None else [batch]

    def _expect(self, error, call, *args):
        """``call(*args)`` on the env must raise ``error`` (None: return); returns its result."""
        if error is None:
            return call(*args)
        try:
            call(*args)
        except error:
            return None
        raise AssertionError(f"{self.log}: expected {error.__name__}")

    def _step_models(self, batches, actions_of):
        return _concat([self.models[b].step(actions_of(b)) for b in batches])

    def _rows(self, b):
        return slice(b * self.rows_per_batch, (b + 1) * self.rows_per_batch)

    # -- calls ----------------------------------------------------------------------------------
    def call(self, op: tuple) -> None:
        self.log.append(op)
        getattr(self, "_" + op[0])(*op[1:])

    def _reset(self, seed):
        if any(a is not None for a in self.in_flight):
            self._expect(RuntimeError, lambda: self.env.reset(seed=seed))
            return
        got = self.env.reset(seed=seed)
        size = NUM_INSTANCES // self.num_batches
        expected = _concat(
            [
                m.reset(seed=None if seed is None else (seed + b * size) % 2**64)
                for b, m in enumerate(self.models)
            ]
        )
        assert _same(got, expected), self.log
        self.started = True

    def _step(self, spec):
        actions, bad = self._actions(spec, self.env.num_envs)
        if any(a is not None for a in self.in_flight) or not self.started:
            self._expect(RuntimeError, self.env.step, actions)
            return
        if bad:
            self._expect(ValueError, self.env.step, actions)
            return
        got = self.env.step(actions)
        expected = self._step_models(range(self.num_batches), lambda b: actions[self._rows(b)])
        assert _same(got, expected), self.log

    def _step_async(self, batch, spec):
        if not self.is_async:
            batch = None
        rows = self.env.num_envs if batch is None else self.rows_per_batch
        offset = 0 if batch is None else batch * self.rows_per_batch
        actions, bad = self._actions(spec, rows, offset)
        start = self.env.step_async
        args = (actions,) if batch is None else (actions, batch)
        batches = self._batches(batch)
        if any(self.in_flight[b] is not None for b in batches) or not self.started:
            self._expect(RuntimeError, start, *args)
            return
        if bad:
            self._expect(ValueError, start, *args)
            return
        start(*args)
        for b in batches:
            self.in_flight[b] = actions if batch is not None else actions[self._rows(b)]

    def _step_wait(self, batch):
        if not self.is_async:
            batch = None
        batches = self._batches(batch)
        wait = self.env.step_wait if batch is None else (lambda: self.env.step_wait(batch=batch))
        if any(self.in_flight[b] is None for b in batches):
            self._expect(RuntimeError, wait)
            return
        got = wait()
        expected = self._step_models(batches, lambda b: self.in_flight[b])
        for b in batches:
            self.in_flight[b] = None
        assert _same(got, expected), self.log

    def _close(self):
        self.env.close()
        for b, pending in enumerate(self.in_flight):
            if pending is not None:  # dropped: every instance of the batch restarts
                self.models[b]._autoreset[:] = True
                self.in_flight[b] = None

    def finish(self) -> None:
        """Wait for what is in flight, take one more full step, compare; close both."""
        for b in range(self.num_batches):
            if self.in_flight[b] is not None:
                self._step_wait(b if self.is_async else None)
        if self.started:
            self._step((7, None))
        self.env.close()
        for m in self.models:
            m.close()


def run_calls(kind: str, executor: tuple[str, int], calls: list[tuple]) -> None:
    """Apply ``calls`` to a fresh env and its model; AssertionError on any mismatch."""
    machine = VectorCalls(kind, executor)
    try:
        for op in calls:
            machine.call(op)
        machine.finish()
    finally:
        machine.env.close()
