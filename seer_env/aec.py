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
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

__all__ = ["SeerAECWrapper", "aec_env"]


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
        try:
            super().step(action)
        except Exception:  # refused (a bad action): the wrapper changed no more than before
            self._torn = None
            raise
        self._torn = None


def aec_env(parallel_env: ParallelEnv, *, enforce_order: bool = True) -> AECEnv:
    """``parallel_env`` as an AEC env (PettingZoo's ``parallel_to_aec``, or without its wrapper)."""
    aec = SeerAECWrapper(parallel_env)
    return OrderEnforcingWrapper(aec) if enforce_order else aec
