"""The live vector envs, so that a child forked mid-call finds none stuck in that call.

A call that ran on another thread at the fork never returns in the child: its
"one call at a time" flag would stay taken and its step never settle. After a
fork, the child gives every live vector env a free flag and drops what was in
flight (every instance resets on its next step).
"""

from __future__ import annotations

import contextlib
import os
import weakref
from typing import Any

from seer_env.vector.one_call import OneCall

# Every live vector env: SeerVectorEnv adds itself when built or unpickled.
LIVE: weakref.WeakSet[Any] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A call that ran on another thread at the fork never returns in the child: forget it."""
    for env in list(LIVE):
        if env._call.locked():
            env._call = OneCall()
            env._drop_pending()  # the runtime's instances were mid-call: all need a reset
            with contextlib.suppress(Exception):
                env.sim.close()  # forgets a background step of the parent's (step_wait's)


os.register_at_fork(after_in_child=_after_fork_in_child)
