"""``seer_env.kernel``: helpers that handlers call, in both modes."""

from __future__ import annotations

import functools
import importlib.util


def numba_available() -> bool:
    """Whether numba is installed (compiled mode needs it)."""
    return importlib.util.find_spec("numba") is not None


def kernel(fn):
    """Mark ``fn`` as a helper that handlers call (both modes).

    ``fn`` stays a plain Python function (interpreted mode); when numba is
    installed, numba compiles it wherever a compiled handler calls it.
    """
    if numba_available():
        from numba.extending import overload

        @functools.wraps(fn)
        def typer(*args, **kwargs):
            return fn

        overload(fn)(typer)
    return fn
