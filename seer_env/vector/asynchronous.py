"""The async vector env: batches of instances stepped in the background.

EnvPool's send/recv idea with Gymnasium's ``step_async``/``step_wait`` names:
``num_envs`` instances are split into ``num_batches`` batches of consecutive
instances, each a :class:`~seer_env.vector.SeerVectorEnv` with its own
background thread. ``step_async(actions, batch=b)`` checks and copies the
actions and returns at once; the C++ step runs without the GIL while Python
computes the policy for another batch; ``step_wait(batch=b)`` returns what
``SeerVectorEnv.step`` would have. Two half-batches in flight:

```python
env = seer_env.vector.make_async("aircraft_v0", num_instances=8, num_batches=2, num_uavs=128)
obs, _ = env.reset(seed=0)
obs = [obs[env.rows(0)], obs[env.rows(1)]]
env.step_async(policy(obs[0]), batch=0)
for t in range(steps):
    env.step_async(policy(obs[1]), batch=1)  # policy(obs[1]) ran while batch 0 stepped
    obs[0] = env.step_wait(batch=0)[0]
    env.step_async(policy(obs[0]), batch=0)  # ... and this one while batch 1 stepped
    obs[1] = env.step_wait(batch=1)[0]
env.step_wait(batch=0)
```

Every instance sees exactly what it would in ``SeerVectorEnv(name, num_envs)``
(byte-identical: instance ``i`` is seeded ``seed + i`` either way, and
instances never interact). Rows are laid out as in ``SeerVectorEnv``;
``rows(b)`` are batch ``b``'s. ``step(actions)`` steps every batch (all in the
background at once) and waits. A failure inside a background step is raised
by the ``step_wait`` of its batch, its message naming the instance
(``exc.instance``, counted over all batches); that instance resets on its
next step, like in ``SeerVectorEnv``. ``num_threads`` applies to each batch
(each has its own pool); ``check`` and ``check_steps`` to every instance, as
in ``SeerVectorEnv``. A call on every batch checks all of them before any
acts; Ctrl-C interrupts every batch and leaves the env consistent, nothing
in flight (as ``SeerVectorEnv``: docs/reliability.md). ``close()`` interrupts
the steps in flight (their instances autoreset) and joins every background thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from seer_env.snapshot import Snapshot
from seer_env.validation import validate_int, validate_reset_options, validate_seed
from seer_env.vector.closed_when_collected import ClosedWhenCollected
from seer_env.vector.instance_count import resolve_num_instances
from seer_env.vector.one_call import run_on_all
from seer_env.vector.reset_mask import instance_mask
from seer_env.vector.sync import SeerVectorEnv

__all__ = ["SeerAsyncVectorEnv"]


class SeerAsyncVectorEnv(ClosedWhenCollected, VectorEnv):
    """``num_envs`` instances in ``num_batches`` batches, each steppable in the background."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        name: str,
        num_instances: int | None = None,
        num_batches: int = 2,
        *,
        num_envs: int | None = None,
        **config: Any,
    ) -> None:
        # num_envs= is the deprecated name of num_instances (seer_env.vector.instance_count).
        self.num_instances = resolve_num_instances(num_instances, num_envs)
        self.num_batches = validate_int("num_batches", num_batches, 1, self.num_instances)
        if self.num_instances % self.num_batches:
            raise ValueError(
                f"num_batches must divide num_instances={self.num_instances}, "
                f"got {self.num_batches}"
            )
        seed = validate_seed(config.pop("seed", None))
        #: Instances per batch.
        self.batch_instances = self.num_instances // self.num_batches
        size = self.batch_instances
        self.batches: list[SeerVectorEnv] = []
        for b in range(self.num_batches):
            batch_seed = None if seed is None else (seed + b * size) % 2**64
            # The first batch's memory check counts every batch: refused before
            # any batch is built, not after some are.
            total = self.num_instances if b == 0 else None
            vec = SeerVectorEnv(name, size, seed=batch_seed, _memory_instances=total, **config)
            vec.instance_offset = b * size
            self.batches.append(vec)
        first = self.batches[0]
        self.env_name = name
        self.agents_per_instance = first.agents_per_instance
        self.single_observation_space = first.single_observation_space
        self.single_action_space = first.single_action_space
        self.single_state_space = first.single_state_space
        self.num_envs = self.num_instances * self.agents_per_instance
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.max_cycles = first.max_cycles
        self._batch_rows = size * self.agents_per_instance

    def state(self) -> np.ndarray:
        """Every instance's global state, ``float32[num_instances, state_dim]`` (none in flight)."""
        return np.concatenate([b.state() for b in self.batches])

    def neighbours(self) -> np.ndarray:
        """Every instance's neighbour table, ``int64[num_instances, agents, max_degree]``."""
        return np.concatenate([b.neighbours() for b in self.batches])

    def snapshot(self, instance: int) -> Snapshot:
        """Instance ``instance``'s complete state (``SeerVectorEnv.snapshot``; none in flight)."""
        vec, i = self._instance(instance)
        return vec.snapshot(i)

    def restore(self, instance: int, snapshot: Snapshot | bytes) -> None:
        """Put instance ``instance`` into ``snapshot``'s state (``SeerVectorEnv.restore``)."""
        vec, i = self._instance(instance)
        vec.restore(i, snapshot)

    def _instance(self, instance: int) -> tuple[SeerVectorEnv, int]:
        """The batch holding ``instance`` and its index there."""
        i = validate_int("instance", instance, 0, self.num_instances - 1)
        return self.batches[i // self.batch_instances], i % self.batch_instances

    def rows(self, batch: int) -> slice:
        """The rows of batch ``batch`` in the full ``[num_envs, ...]`` arrays."""
        batch = validate_int("batch", batch, 0, self.num_batches - 1)
        return slice(batch * self._batch_rows, (batch + 1) * self._batch_rows)

    # -- API ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Reset every batch (or the instances in ``options["reset_mask"]``); waits.

        Everything is checked before any batch resets: a call that raises
        resets nothing (unless the runtime fails midway, as in SeerVectorEnv).
        """
        return self._on_every_batch("reset()", self._reset_all, seed, options)

    def _reset_all(self, seed: Any, options: Any):
        m, size = self.num_instances, self.batch_instances
        for vec in self.batches:
            vec._settle_interrupted()
        if isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != m:
                raise ValueError(f"seed must be an int or a list of {m} seeds, got {len(seed)}")
            seeds = [list(seed[b * size : (b + 1) * size]) for b in range(self.num_batches)]
        elif seed is None:
            seeds = [None] * self.num_batches
        else:
            base = validate_seed(seed)
            seeds = [(base + b * size) % 2**64 for b in range(self.num_batches)]
        options = validate_reset_options(options, self.batches[0]._configuration)
        masks: list[Any] = [None] * self.num_batches
        if options and "reset_mask" in options:
            # The sync env's check, over every instance: the batches get bool masks.
            mask = instance_mask(options["reset_mask"], m, self.agents_per_instance)
            masks = [mask[b * size : (b + 1) * size] for b in range(self.num_batches)]
        plans = []
        for vec, s, mask in zip(self.batches, seeds, masks):
            opts = None if mask is None else {**options, "reset_mask": mask}
            plans.append(vec._check_reset(s, opts))
        results = [vec._reset(plan) for vec, plan in zip(self.batches, plans)]
        obs = np.concatenate([r[0] for r in results])
        return obs, _concat_infos([r[1] for r in results])

    def step_async(self, actions: np.ndarray, batch: int | None = None) -> None:
        """Check ``actions`` and start the step of ``batch`` (all batches if None); returns at once.

        ``actions`` has the rows of ``batch`` only (``[num_envs // num_batches *
        agents, ...]``), or every row when ``batch`` is None. Every batch's
        rows are checked before any batch starts (an error names the row of
        ``actions``).
        """
        if batch is not None:
            self.batches[self._batch(batch)].step_async(actions)
            return
        self._on_every_batch("step_async()", self._start_all, actions)

    def _start_all(self, actions: Any) -> None:
        self._launch_all(self._check_all(actions))

    def step_wait(self, batch: int | None = None):
        """Wait for ``batch`` (all batches if None): ``(obs, rewards, terms, truncs, infos)``.

        Raises the failure of a background step, naming its instance. With
        ``batch=None`` every batch must have a step in flight (RuntimeError
        otherwise, waiting for none); every batch is waited for before the first
        failure is raised, and a KeyboardInterrupt interrupts the batches not yet done.
        """
        if batch is not None:
            return self.batches[self._batch(batch)].step_wait()
        return self._on_every_batch("step_wait()", self._wait_every_batch)

    def _wait_every_batch(self):
        for vec in self.batches:
            vec._settle_interrupted()
        idle = [b for b, vec in enumerate(self.batches) if vec._pending is None]
        if idle:
            raise RuntimeError(
                f"step_wait() called without a step_async() in flight for batch {idle[0]} "
                "(step_async(actions) starts every batch; a batch started alone is "
                "waited for with step_wait(batch=b))"
            )
        try:
            return self._wait_all()
        except BaseException:
            self._stop_all()
            raise

    def step(self, actions: np.ndarray):
        """Step every batch (concurrently, in the background) and wait: ``SeerVectorEnv.step``.

        Ctrl-C interrupts every batch; their interrupted instances autoreset,
        and nothing is left in flight.
        """
        return self._on_every_batch("step()", self._step_all, actions)

    def _step_all(self, actions: Any):
        steps = self._check_all(actions)
        try:
            self._launch_all(steps)
            return self._wait_all()
        except BaseException:  # Ctrl-C between the two too: nothing is left in flight
            self._stop_all()
            raise

    def close(self, **kwargs: Any) -> None:
        """Join every batch's threads; steps in flight are interrupted (``SeerVectorEnv.close``)."""
        self.close_extras(**kwargs)
        self.closed = True

    def close_extras(self, **kwargs: Any) -> None:
        """Interrupt the steps in flight (results dropped) and join every batch's threads.

        RuntimeError, closing nothing, while a call runs on any batch in another thread.
        """
        batches = self.__dict__.get("batches", [])
        self._on_every_batch("close()", self._close_all, batches, batches=batches)

    @staticmethod
    def _close_all(batches: list[SeerVectorEnv]) -> None:
        for vec in batches:
            vec._close()

    # -- helpers --------------------------------------------------------------------------------
    def _batch(self, batch: int) -> int:
        return validate_int("batch", batch, 0, self.num_batches - 1)

    def _on_every_batch(
        self,
        what: str,
        fn: Callable[..., Any],
        *args: Any,
        batches: list[SeerVectorEnv] | None = None,
    ) -> Any:
        """``fn(*args)`` holding every batch's one-call flag.

        RuntimeError, holding none, if a call holds one (``one_call.run_on_all``).
        """
        vecs = self.batches if batches is None else batches
        return run_on_all([vec._call for vec in vecs], what, self._in_use, fn, *args)

    def _in_use(self, fn: Callable[..., Any], *args: Any) -> Any:
        self.closed = False  # close() (or garbage collection) has work again
        return fn(*args)

    def _check_all(self, actions: Any) -> list:
        """Check every batch's rows (an error names the row): each batch's step, nothing started."""
        for vec in self.batches:
            vec._settle_interrupted()
        live = np.concatenate([vec._live_rows() for vec in self.batches])
        for vec in self.batches:
            vec._require_no_step_in_flight("step")
            if not vec._started:
                raise RuntimeError("step() called before reset()")
        checked = self.batches[0]._actions.check_array(actions, self.num_envs, live=live)
        return [
            vec._check_step(checked[self.rows(b)], checked=True)
            for b, vec in enumerate(self.batches)
        ]

    def _launch_all(self, steps: list) -> None:
        """Start every batch's checked step; on any failure, none is left in flight."""
        try:
            for vec, step in zip(self.batches, steps):
                vec._launch(step)
        except BaseException:
            self._stop_all()  # leave nothing in flight behind a failed call
            raise

    def _stop_all(self) -> None:
        """Interrupt and settle every batch's step in flight (a failed call leaves none)."""
        for vec in self.batches:
            try:
                vec._stop_step()
            except BaseException:  # noqa: BLE001 - a second Ctrl-C: settled at its next call
                pass

    def _wait_all(self):
        """Wait for every batch; after a KeyboardInterrupt, interrupt the rest first."""
        results, error = [], None
        for vec in self.batches:
            try:
                results.append(vec._wait(interrupt=isinstance(error, KeyboardInterrupt)))
            except BaseException as exc:  # wait for the others before raising
                if (
                    error is None
                    or isinstance(exc, KeyboardInterrupt)
                    and not isinstance(error, KeyboardInterrupt)
                ):
                    error = exc
        if error is not None:
            raise error
        return (
            *(np.concatenate([r[k] for r in results]) for k in range(4)),
            _concat_infos([r[4] for r in results]),
        )


def _concat_infos(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
