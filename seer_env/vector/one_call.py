"""The vector envs' "one call at a time" flag: a second call is refused, and Ctrl-C frees it.

A vector env runs one call at a time: a call made while another runs (in
another thread, or from one of the env's own handlers) raises RuntimeError at
once, without waiting. The C++ batch has a busy flag too, but the Python part
of a call (the action check, the bookkeeping) runs outside it, and
``close()`` must not run while another thread is inside ``step()``.

The flag must be free again after a KeyboardInterrupt at any point of a call.
Python raises it only where the interpreter checks for signals (a Python
function's entry, after a call returns, a loop's back edge), never inside a
C call. So a call takes the flag inside its own ``try`` and releases it in
the ``finally`` with one C call: a token is the key of a dict (the first key
holds the flag), and ``deque(map(methodcaller("pop", token, None), ...))``
removes it from every flag without running a Python line. (A ``with`` block
could not promise this: Ctrl-C between its ``__enter__`` taking the flag and
the block would leave the flag taken until the generator is collected.)
"""

from __future__ import annotations

import collections
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["OneCall", "run_on_all"]

T = TypeVar("T")


class OneCall:
    """One vector env's (or batch's) flag: ``run(what, fn, *args)`` holds it while ``fn`` runs."""

    __slots__ = ("_holders", "_what")

    def __init__(self) -> None:
        self._holders: dict[object, None] = {}  # call tokens; the first one holds the flag
        self._what = ""

    def locked(self) -> bool:
        """Whether a call holds the flag (or is trying to take it)."""
        return bool(self._holders)

    def run(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` holding the flag; RuntimeError naming ``what`` if a call holds it."""
        return run_on_all((self,), what, fn, *args)


def run_on_all(flags: Sequence[OneCall], what: str, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` holding every flag of ``flags`` (RuntimeError, holding none, if one is)."""
    token = object()
    release = operator.methodcaller("pop", token, None)
    holders = [flag._holders for flag in flags]
    try:
        for flag in flags:
            flag._holders[token] = None
            if next(iter(flag._holders)) is not token:
                raise RuntimeError(
                    f"{what} called while another call on this vector env is in progress (in "
                    f"another thread: {flag._what}); wait for it to return"
                )
            flag._what = what
        return fn(*args)
    finally:
        collections.deque(map(release, holders), maxlen=0)  # one C call: Ctrl-C cannot split it
