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
    installed, numba compiles it wherever a compiled handler calls it, as it
    compiles the handlers: every index checked (an index out of range fails
    the calling handler) and every loop polled for interrupts (``loop_polls``).
    """
    fn._seer_kernel = True  # compile.py hashes the files of the helpers a model calls
    if numba_available():
        from numba.extending import overload

        from seer_env.models.numba.loop_polls import PollingPipeline

        @functools.wraps(fn)
        def typer(*args, **kwargs):
            return fn

        overload(fn, jit_options={"boundscheck": True, "pipeline_class": PollingPipeline})(typer)
    return fn
