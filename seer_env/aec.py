"""The AEC view of a seer_env ParallelEnv (``pcs_v1.env()``, ``raw_env()``): PettingZoo's wrapper.

PettingZoo's ``parallel_to_aec_wrapper`` keeps its own bookkeeping (the
agent to act, the actions so far, rewards, flags) and updates it after the
ParallelEnv steps. Ctrl-C between the two would leave it describing another
step than the env's (the next ``step()`` would step again with stale
rewards). ``SeerAECWrapper`` adds the rule every seer_env surface follows
(docs/reliability.md, *Ctrl-C during a step*): after a KeyboardInterrupt out
of ``step()`` or ``reset()``, ``step()`` raises RuntimeError until a
``reset()`` completes, and, as for the ParallelEnv, the interrupted call does
not advance the seed sequence. Errors (a refused action) change nothing, as before.

Over an env whose agents act when their events ask (``SeerDecisionEnv``),
``agent_selection`` walks the agents asked at each return in ``(time,
agent)`` order; with ``decisions="one_at_a_time"`` each return asks one agent
(several only when their requests come from one handler phase, e.g. reset),
the exact order of the serial run.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from seer_env.snapshot import Snapshot

__all__ = ["AECSnapshot", "SeerAECWrapper", "SeerOrderEnforcingWrapper", "aec_env"]


class SeerAECWrapper(parallel_to_aec_wrapper):
    """``parallel_to_aec_wrapper`` that refuses to step after an interrupted call until reset."""

    _torn: str | None = None  # the call a KeyboardInterrupt stopped midway
    _seed_before: int | None = None  # the ParallelEnv's episode seed before that call

    def _begin(self, call: str) -> None:
        if self._torn is None:
            par = self.env
            self._seed_before = par._episode_seed if par._torn is None else par._torn[1]
        self._torn = call

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """PettingZoo's reset; interrupted, the env refuses ``step()`` until reset again."""
        torn = self._torn
        if torn is not None and self.env._torn is None:
            # The ParallelEnv finished its part of the torn call: continue its seeds from before.
            self.env._torn = (torn, self._seed_before)
        self._begin("reset()")
        try:
            super().reset(seed=seed, options=options)
        except Exception:  # refused (a bad seed): nothing changed
            self._torn = torn
            raise
        self._torn = None

    def step(self, action: Any) -> None:
        """PettingZoo's step; RuntimeError after an interrupted ``step()`` or ``reset()``."""
        if self._torn is not None:
            raise RuntimeError(
                f"step() called after a {self._torn} that was interrupted (Ctrl-C) midway; "
                "call reset() first"
            )
        self._begin("step()")
        if getattr(self.env, "_event_driven", False):
            # PettingZoo's wrapper keeps the actions of every agent that ever
            # acted; an event-driven env takes those of the agents it asked,
            # and at the episode's end each agent's dead step removes an entry.
            asked = set(self.env.agents) or set(self.agents)
            self._actions = {a: self._actions.get(a) for a in asked}
        try:
            super().step(action)
        except Exception:  # refused (a bad action): the wrapper changed no more than before
            self._torn = None
            raise
        self._torn = None

    # -- snapshots (docs/branching.md) ---------------------------------------------------------
    # The turn bookkeeping PettingZoo's wrapper keeps beside the ParallelEnv.
    _TURN_FIELDS = (
        "agents",
        "_live_agents",
        "_actions",
        "_agent_selector",
        "agent_selection",
        "_observations",
        "terminations",
        "truncations",
        "rewards",
        "_cumulative_rewards",
        "infos",
        "new_agents",
        "new_values",
    )

    def snapshot(self) -> AECSnapshot:
        """The AEC env's state: the ParallelEnv's snapshot and the turn bookkeeping.

        It may be taken between any two ``step()`` calls (the actions of the
        agents that acted this cycle are part of it).
        """
        if self._torn is not None:
            raise RuntimeError(
                f"snapshot() called after a {self._torn} that was interrupted; call reset() first"
            )
        if not hasattr(self, "agent_selection"):
            raise RuntimeError("snapshot() called before reset()")
        turns = {k: getattr(self, k) for k in self._TURN_FIELDS if hasattr(self, k)}
        return AECSnapshot(self.env.snapshot(), copy.deepcopy(turns))

    def restore(self, snapshot: AECSnapshot) -> None:
        """Put the AEC env into ``snapshot``'s state (``snapshot()`` of an AEC env like this one).

        Raises:
            ValueError: not an AEC snapshot, or one of another workload or configuration.
        """
        if not isinstance(snapshot, AECSnapshot):
            raise ValueError(
                f"snapshot must be an AEC env's snapshot(), got {type(snapshot).__name__} (a "
                "ParallelEnv's snapshot restores into a ParallelEnv)"
            )
        self.env.restore(snapshot.parallel)  # refused before it changes anything
        self.__dict__.update(copy.deepcopy(snapshot.turns))
        self._torn = None


@dataclasses.dataclass(frozen=True)
class AECSnapshot:
    """An AEC env's ``snapshot()``: the ParallelEnv's snapshot and the turn bookkeeping.

    The turn bookkeeping is PettingZoo's Python objects (the actions so far,
    rewards, the agent selector), copied: an AEC snapshot lives in memory
    (``copy``, ``pickle`` of the process's own objects); its ``parallel`` part
    has a bytes form (``bytes(snapshot.parallel)``).
    """

    parallel: Snapshot
    turns: dict[str, Any]


class SeerOrderEnforcingWrapper(OrderEnforcingWrapper):
    """PettingZoo's order enforcement, which also lets ``restore`` start an episode."""

    def snapshot(self) -> AECSnapshot:
        """``SeerAECWrapper.snapshot`` of the wrapped env."""
        return self.env.snapshot()

    def restore(self, snapshot: AECSnapshot) -> None:
        """``SeerAECWrapper.restore``; the env may be stepped after it, as after ``reset()``."""
        self.env.restore(snapshot)
        self._has_reset = True


def aec_env(parallel_env: ParallelEnv, *, enforce_order: bool = True) -> AECEnv:
    """``parallel_env`` as an AEC env (PettingZoo's ``parallel_to_aec``, or without its wrapper)."""
    aec = SeerAECWrapper(parallel_env)
    return SeerOrderEnforcingWrapper(aec) if enforce_order else aec
