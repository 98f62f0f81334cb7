"""Snapshots of a vector env's instances: one instance saved, restored, or a batch of branches.

A snapshot of an instance restores into any instance of a vector env, or into a
``SeerParallelEnv``, of the same workload and configuration (docs/branching.md).
``InstanceSnapshots`` is a part of ``SeerVectorEnv`` (``seer_env.vector.sync``).
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from seer_env.env import SeerParallelEnv
from seer_env.snapshot import Snapshot, episode_fields, require_same_env

_Vector = TypeVar("_Vector", bound="InstanceSnapshots")


class InstanceSnapshots:
    """``SeerVectorEnv``'s snapshots: ``from_snapshot``, ``snapshot(i)``, ``restore(i, snap)``."""

    @classmethod
    def from_snapshot(
        cls: type[_Vector], env: SeerParallelEnv, snapshot: Snapshot, branches: int, **options: Any
    ) -> _Vector:
        """``branches`` instances of ``env``'s workload, each restored from ``snapshot``.

        ``SeerParallelEnv.fork`` builds one from the env's own snapshot. Each
        instance continues exactly as ``env`` would from ``snapshot`` given
        the same actions; all step together in one call. ``options``:
        ``executor`` and ``num_threads`` for the batch (default: ``env``'s).
        """
        vec = cls(
            getattr(env, "metadata", {}).get("name", "seer_env"),
            branches,
            _prototype_env=env,
            **options,
        )
        try:
            for i in range(vec.num_instances):
                vec.restore(i, snapshot)
        except BaseException:
            vec.close()
            raise
        return vec

    def snapshot(self, instance: int) -> Snapshot:
        """Instance ``instance``'s complete state (as ``SeerParallelEnv.snapshot``).

        It restores into this instance or another, another vector env's
        instance or a ``SeerParallelEnv`` of the same workload and
        configuration, on any executor.
        """
        return self._call.run("snapshot()", self._snapshot, instance)

    def restore(self, instance: int, snapshot: Snapshot | bytes) -> None:
        """Put instance ``instance`` into ``snapshot``'s state (see ``snapshot``).

        An instance whose snapshot has no live agent autoresets on the next
        step; instances never reset (a fresh vector env) autoreset then too.

        Raises:
            ValueError: another workload or configuration (naming what differs),
                corrupt bytes, or an instance out of range; nothing changes.
        """
        self._call.run("restore()", self._restore_instance, instance, snapshot)

    def _instance_index(self, instance: Any) -> int:
        if isinstance(instance, bool) or not hasattr(instance, "__index__"):
            raise ValueError(f"instance must be an integer, got {instance!r}")
        i = int(instance.__index__())
        if not 0 <= i < self.num_instances:
            raise ValueError(f"instance must be in [0, {self.num_instances}), got {i}")
        return i

    def _snapshot(self, instance: Any) -> Snapshot:
        self._settle_interrupted()
        self._require_no_step_in_flight("snapshot")
        i = self._instance_index(instance)
        if self._episode_seeds[i] is None:
            raise RuntimeError(f"snapshot({i}) called before instance {i} was reset")
        if self.sim.needs_reset(i):
            raise RuntimeError(
                f"snapshot({i}) called after instance {i} failed; it resets on the next step"
            )
        a = self.agents_per_instance
        alive = self._alive[i * a : (i + 1) * a].view(bool) & ~self._autoreset[i]
        episode = {
            "agents": [n for n, live in zip(self._agent_names, alive.tolist()) if live],
            "cycles": int(self._cycles[i]),
            "episode_seed": self._episode_seeds[i],
            "checked_steps_left": int(self.sim.checked_steps_left(i)),
        }
        return Snapshot(dict(self._identity), episode, self.sim.save(i))

    def _restore_instance(self, instance: Any, snapshot: Any) -> None:
        self._settle_interrupted()
        self._require_no_step_in_flight("restore")
        i = self._instance_index(instance)
        snap = require_same_env(snapshot, self._identity)
        agents, live, cycles, seed, checked = episode_fields(
            snap.episode, self._agent_rows, self.max_cycles
        )
        self.sim.load(i, snap.runtime)  # refused before it changes anything
        if checked > self.sim.checked_steps_left(i):
            # The runtime arms every instance alike: the others check a few
            # steps more than they had to (checking changes no output).
            self.sim.check_next_steps(checked)
        a = self.agents_per_instance
        self._alive[i * a : (i + 1) * a] = live
        self._episode_seeds[i] = seed
        self._cycles[i] = cycles
        self._autoreset[i] = not live.any()
        self._reset_seeds.pop(i, None)
        if not self._started:  # the others were never reset: they autoreset on the next step
            self._autoreset |= np.array([s is None for s in self._episode_seeds])
            self._started = True
