"""Compiled mode: numba compiles a model class's handlers to C functions for the runtime.

Each handler is compiled in nopython mode (``numba.njit``) and called from a
generated entry point (``entry_points.py``) that numba compiles to a C
function (a ``cfunc``); the runtime calls their addresses on its worker
threads, without the GIL. The ``handler_api`` calls inside compile to calls
of the runtime's C ABI (``abi.py``). Both are cached on disk (``cache.py``).
"""

from __future__ import annotations

import re
import sys
import time
import traceback
import types

from seer_env import handler_api
from seer_env.models.numba import cache
from seer_env.models.numba.kernel import numba_available

# entry_points, loop_polls, read_only and abi import numba: each function below
# imports them when it runs, so `import seer_env` works (and stays light) without it.


class NumbaCompileError(TypeError):
    """numba could not compile a handler; the message names it and quotes numba."""


class _Compiled:
    """A model class's compiled handlers: C entry points and their addresses."""

    def __init__(self, addresses: dict[str, int], cfuncs: list, seconds: float, cached: bool):
        self.addresses = addresses
        self.cfuncs = cfuncs  # own the machine code behind the addresses
        self.seconds = seconds
        self.cached = cached


def _from_numba_cache(error: BaseException) -> bool:
    """``error`` was raised while numba read its on-disk cache (a truncated index, say)."""
    frames = traceback.extract_tb(error.__traceback__)
    return any(frame.filename.endswith(("caching.py", "serialize.py")) for frame in frames)


def _compile_entry(cls: type, hook: str, entry: str, fn, kernel, cacheable: bool, bounds: bool):
    """The C function numba compiles for one entry point; NumbaCompileError names the handler.

    An unreadable cache entry (a process killed while writing it, a full
    disk) is dropped and the handler compiled afresh, once.
    """
    import numba

    from seer_env.models.numba import entry_points

    signature = entry_points.signature(entry)
    for attempt in (1, 2):
        try:
            return numba.cfunc(signature, nopython=True, cache=cacheable, boundscheck=bounds)(fn)
        except Exception as error:  # noqa: BLE001 (numba raises internal errors of any type)
            if cacheable and attempt == 1 and _from_numba_cache(error):
                print(
                    f"seer_env: numba's cache of {cls.__name__}.{hook} is unreadable "
                    f"({type(error).__name__}: {error}); dropping it and recompiling",
                    file=sys.stderr,
                    flush=True,
                )
                from numba.core.caching import FunctionCache

                FunctionCache(fn).flush()
                cache_of_kernel = getattr(kernel, "_cache", None)
                if cache_of_kernel is not None and hasattr(cache_of_kernel, "flush"):
                    cache_of_kernel.flush()
                continue
            _refuse_global_array_writes(cls, hook, kernel, error)
            raise NumbaCompileError(
                f"{cls.__name__}.{hook} cannot be compiled by numba (nopython mode); run with "
                f"compiled=False to debug it. numba says:\n{type(error).__name__}: "
                f"{_plain(str(error))}"
            ) from None
    raise AssertionError("not reached")


def _plain(text: str) -> str:
    """``text`` without the terminal colour codes numba puts in its messages."""
    return _ANSI_CODE.sub("", text)


_ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


def _refuse_global_array_writes(cls: type, hook: str, kernel, error: BaseException) -> None:
    """One clear NumbaCompileError when numba refused a handler's write to a global array.

    numba freezes a module-level (or closure) numpy array into the compiled
    code as a read-only constant; a write to it is a ``TypingError`` of
    several dozen lines about ``setitem(readonly array(...))``. When that is
    the error, and the handler (or a helper it calls) writes such an array,
    the error names the handler, the global and the line instead; numba's
    error stays available as ``__cause__``.
    """
    from numba.core.errors import TypingError

    if not isinstance(error, TypingError) or "readonly array" not in str(error):
        return
    from seer_env.models.numba import read_only

    try:
        writes = read_only.global_array_writes(getattr(kernel, "py_func", kernel))
    except Exception:  # noqa: BLE001 (numba's front end; numba's own error is raised then)
        return
    if not writes:
        return
    name, function, file, line = writes[0]
    called = "" if function.endswith(f".{hook}") else f", in {function}, which it calls"
    raise NumbaCompileError(
        f"{cls.__name__}.{hook} writes the global array `{name}` ({file}, line {line}{called}): "
        "numba compiles a global numpy array into the code as a read-only constant, so no "
        "handler can write it (and one array would be shared by every entity and thread). "
        "Keep what a handler changes in its entity's `state` (a field, or an array field, per "
        "entity); a global array may only be read. numba's error is this exception's __cause__."
    ) from error


def _refuse_read_only_writes(cls: type, hook: str, fn) -> None:
    """NumbaCompileError when handler ``fn`` writes one of its read-only records."""
    from seer_env.models.numba import read_only

    try:
        writes = read_only.writes_to_read_only(hook, fn)
    except Exception:  # noqa: BLE001 (numba's front end; what it cannot read, numba reports)
        return
    if writes:
        source = getattr(getattr(fn, "py_func", fn), "__code__", None)
        where = f" ({source.co_filename})" if source is not None else ""
        raise NumbaCompileError(
            f"{cls.__name__}.{hook} writes a read-only record{where}: "
            + "; ".join(writes)
            + ". Compiled code cannot refuse such a write when it runs, so it is refused "
            "here. A handler writes only its own `state` (and `payload`, `public`, `out`, "
            "`states` in reset); copy a record (`.copy()`) to change it locally."
        )


_COMPILED: dict[tuple, _Compiled] = {}
_REPORT: dict[str, dict] = {}


def compile_report() -> dict[str, dict]:
    """Per compiled model class of this process: ``seconds``, ``from_cache`` and ``disk_cache``.

    ``disk_cache`` is ``"on"``, or ``"off: "`` and why the compiled code is
    not cached on disk (a global value that cannot be hashed stably, a class
    without a source file, an unwritable cache directory).
    """
    return {name: dict(info) for name, info in _REPORT.items()}


def compile_model(cls: type, discrete: bool) -> _Compiled:
    """The compiled handlers of the ``NumbaModel`` subclass ``cls`` (compiled once per process).

    ``discrete``: the action space is ``Discrete`` (``on_action`` takes an int)
    or a ``Box`` (a float32 array).
    """
    key = (cls, discrete)
    if key in _COMPILED:
        return _COMPILED[key]
    if not numba_available():
        raise ModuleNotFoundError(
            f"{cls.__name__} runs compiled with numba: pip install 'seer_env[numba]', "
            f"or pass compiled=False to run it interpreted"
        )
    import numba

    from seer_env.models.numba import abi, entry_points, frozen_values, loop_polls, read_only

    records = cls._records()
    hooks = cls._hooks()
    bounds = bool(cls.bounds_check)
    entries = {hook: entry_points.entry_of(hook, discrete) for hook in hooks}
    body = "".join(entry_points.entry_source(h, e) for h, e in entries.items())
    # Everything the compiled code depends on: edits to any of these files
    # must not load stale code (numba itself tracks only a function's own file),
    # and the values numba freezes into it (globals, closure variables).
    values, called, unhashable = frozen_values.frozen_values(hooks.values())
    sources = {cache.source_bytes(c) for c in cls.__mro__ if c is not object}
    sources |= {cache.source_bytes(getattr(fn, "py_func", fn)) for fn in hooks.values()}
    sources |= {cache.source_bytes(getattr(fn, "py_func", fn)) for fn in called}
    digest = cache.inputs_digest(
        [
            body.encode(),
            *sorted(sources),
            frozen_values.digest(values),
            cache.source_bytes(abi),
            cache.source_bytes(handler_api),
            cache.source_bytes(entry_points),
            cache.source_bytes(frozen_values),
            cache.source_bytes(loop_polls),
            cache.source_bytes(read_only),
            cache.source_bytes(sys.modules[numba_available.__module__]),
            cache.source_bytes(sys.modules[__name__]),
            numba.__version__.encode(),
            f"boundscheck={bounds}".encode(),
            repr(sorted((k, v.descr) for k, v in records.items())).encode(),
        ]
    )
    qualname = f"{cls.__module__}.{cls.__qualname__}"
    text = entry_points.HEADER.format(qualname=qualname, digest=digest) + body
    not_cached = None  # why the compiled code is not cached on disk
    if unhashable is not None:
        not_cached = unhashable  # never a hit compiled with another value
    elif b"" == cache.source_bytes(cls):
        not_cached = "the class has no source file"
    elif "<locals>" in cls.__qualname__:
        not_cached = "the class is defined inside a function"
    cacheable = not_cached is None
    path = cache.entry_file(qualname, digest)
    cached = cacheable and path.exists()
    if not cached:
        # An entry file exists only for inputs (this digest) that passed the check.
        for hook, fn in hooks.items():
            _refuse_read_only_writes(cls, hook, fn)
    if cacheable and not cached:
        try:
            cache.write_atomically(path, text)
        except OSError as error:
            print(
                f"seer_env: cannot cache compiled code in {path.parent}: {error}", file=sys.stderr
            )
            cacheable, not_cached = False, f"cannot write {path.parent}: {error}"
    # A real module: numba finds a function's globals by its module's name
    # when it loads the function from its cache.
    module = types.ModuleType(f"seer_env_numba_entry_{path.stem}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    namespace.update(
        _STATE=records["state"],
        _PUBLIC=records["public"],
        _PAYLOAD=records["payload"],
        _PARAMS=records["params"],
    )
    for hook, fn in hooks.items():
        is_jitted = isinstance(fn, numba.core.dispatcher.Dispatcher)
        # Not cached on its own: the entry point's cache holds the handler's
        # code (numba links it in), and numba's cache key has no boundscheck.
        # Every loop polls for an interrupt (loop_polls). on_event, run once
        # per event, is inlined into its entry point by LLVM (forceinline:
        # after numba lowered its exceptions to a status, so they stay
        # caught): a call passing every argument on the stack saved, a
        # quarter of a small handler's trip through the ABI.
        namespace[f"_k_{hook}"] = (
            fn
            if is_jitted
            else numba.njit(
                boundscheck=bounds,
                pipeline_class=loop_polls.PollingPipeline,
                forceinline=hook == "on_event",
            )(fn)
        )
    exec(compile(text, str(path) if cacheable else f"<{qualname} entry points>", "exec"), namespace)

    if not cached:
        where = f"once; cached in {path.parent}" if cacheable else f"not cached: {not_cached}"
        print(
            f"seer_env: compiling {cls.__name__}'s {len(hooks)} handlers with numba ({where})...",
            file=sys.stderr,
            flush=True,
        )
    started = time.perf_counter()
    addresses, cfuncs = {}, []
    for hook, entry in entries.items():
        kernel = namespace[f"_k_{hook}"]
        cf = _compile_entry(cls, hook, entry, namespace[hook], kernel, cacheable, bounds)
        addresses[hook] = cf.address
        cfuncs.append(cf)
    # What numba actually loaded: another process may have written the entry
    # file while this one compiled.
    cached = cacheable and all(getattr(cf, "_cache_hits", 0) > 0 for cf in cfuncs)
    seconds = time.perf_counter() - started
    compiled = _Compiled(addresses, cfuncs, seconds, cached)
    _COMPILED[key] = compiled
    _REPORT[qualname] = {
        "seconds": seconds,
        "from_cache": cached,
        "disk_cache": "on" if cacheable else f"off: {not_cached}",
    }
    if not cached:
        print(f"seer_env: compiled {cls.__name__} in {seconds:.1f} s", file=sys.stderr, flush=True)
    return compiled
