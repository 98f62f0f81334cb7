"""The values compiled code freezes: the globals and closure variables handlers reach.

numba compiles a global (``SCALE = float(os.environ["MODEL_SCALE"])``) or a
closure variable into the machine code as a constant. A disk cache keyed on
source text alone would then hand the next process code compiled with the
first process's values. So the cache key holds these values too: for each
handler, and transitively for each ``numba.njit`` function, ``@kernel``
helper or other user function it calls, every global it loads (following
``module.attr`` and ``Class.attr`` as numba resolves them at compile time)
and every closure variable.

Hashed by value: None, bools, numbers, strings, bytes, NumPy scalars, arrays
(dtype, shape and bytes) and dtypes, tuples of these, enum members; modules,
classes, functions and numba types by their qualified name (their code is
tracked by the source digest). Anything else (a list, a dict, an object)
cannot be hashed stably: the model then gets no disk cache at all, never a
stale hit.
"""

from __future__ import annotations

import dis
import enum
import hashlib
import types

import numpy as np

# A function of these packages is the runtime's or a library's: its code is in
# the digest already (seer_env's sources, numba's version), and its globals
# are not the model's. Followed anyway: @kernel helpers and numba.njit functions.
_LIBRARIES = ("seer_env.", "numba.", "numpy.", "llvmlite.")
_ATTRIBUTE_LOADS = ("LOAD_ATTR", "LOAD_METHOD")


class Unhashable(Exception):
    """A frozen value whose bytes cannot be told stably (the message says which)."""


def _qualified(obj) -> str:
    module = getattr(obj, "__module__", None) or "?"
    return f"{module}.{getattr(obj, '__qualname__', getattr(obj, '__name__', repr(obj)))}"


def _codes(code: types.CodeType):
    """``code`` and every code object nested in it (inner functions, comprehensions)."""
    todo = [code]
    while todo:
        current = todo.pop()
        yield current
        todo += [c for c in current.co_consts if isinstance(c, types.CodeType)]


def _global_chains(code: types.CodeType) -> list[tuple[str, ...]]:
    """Each global ``code`` loads, with the attribute names loaded right after it."""
    chains = []
    for current in _codes(code):
        chain: list[str] = []
        for ins in dis.get_instructions(current):
            if ins.opname == "LOAD_GLOBAL":
                if chain:
                    chains.append(tuple(chain))
                chain = [ins.argval]
            elif chain and ins.opname in _ATTRIBUTE_LOADS:
                chain.append(ins.argval)
            elif chain:
                chains.append(tuple(chain))
                chain = []
        if chain:
            chains.append(tuple(chain))
    return chains


def _is_dispatcher(value) -> bool:
    """A ``numba.njit`` function (a dispatcher; duck-typed so numba is imported only when used)."""
    return hasattr(value, "py_func") and type(value).__module__.startswith("numba.")


def _followed(value) -> bool:
    """Whether compiled code would compile ``value``'s own code (so its globals count)."""
    if _is_dispatcher(value) or getattr(value, "_seer_kernel", False):
        return True
    return isinstance(value, types.FunctionType) and not (
        (value.__module__ or "") + "."
    ).startswith(_LIBRARIES)


def value_bytes(value) -> bytes:
    """The bytes that identify ``value`` as compiled code would freeze it.

    Raises:
        Unhashable: naming the type of a value that cannot be hashed stably.
    """
    if isinstance(value, enum.Enum):  # before int: an IntEnum is an int
        return f"enum {_qualified(type(value))}:{value.value!r}".encode()
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return f"{type(value).__name__}:{value!r}".encode()  # repr: exact, -0.0 != 0.0
    if isinstance(value, bytes):
        return b"bytes:" + value
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise Unhashable("an array of Python objects")
        head = f"array {value.dtype.descr!r} {value.shape}:".encode()
        return head + np.ascontiguousarray(value).tobytes()
    if isinstance(value, np.generic):
        return f"numpy {value.dtype.descr!r}:".encode() + value.tobytes()
    if isinstance(value, np.dtype):
        return f"dtype {value!r} {value.descr!r}".encode()
    if isinstance(value, tuple):
        parts = [value_bytes(item) for item in value]
        lengths = ",".join(str(len(p)) for p in parts)
        return f"tuple {_qualified(type(value))} [{lengths}]:".encode() + b"".join(parts)
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}".encode()
    if isinstance(value, type):
        return f"class {_qualified(value)}".encode()
    if isinstance(value, np.ufunc):
        return f"ufunc {value.__name__}".encode()
    if type(value).__module__.startswith("numba.core.types"):
        return f"numba type {value}".encode()
    if _is_dispatcher(value):
        value = value.py_func
    if callable(value) and hasattr(value, "__qualname__"):
        return f"function {_qualified(value)}".encode()  # its code: followed or a library's
    raise Unhashable(f"a {_qualified(type(value))}")


def _resolve(namespace: dict, chain: tuple[str, ...]) -> tuple[str, object] | None:
    """The value a global chain names (``np.pi``, ``Config.SCALE``) and its dotted name.

    Attributes are followed through modules and classes only, as numba
    resolves them when it compiles; None for a name not in ``namespace``
    (a builtin such as ``range``).
    """
    if chain[0] not in namespace:
        return None
    value, used = namespace[chain[0]], [chain[0]]
    for attr in chain[1:]:
        if not isinstance(value, (types.ModuleType, type)) or not hasattr(value, attr):
            break
        value = getattr(value, attr)
        used.append(attr)
    return ".".join(used), value


def frozen_values(functions) -> tuple[list[tuple[str, bytes]], list, str | None]:
    """What the compiled code of ``functions`` (handlers) freezes, and what it calls.

    Returns:
        ``(values, followed, reason)``: ``values`` sorted ``(name, bytes)``
        pairs (``name``: function and global or closure variable);
        ``followed``: the user functions reached (their sources belong in the
        key too); ``reason``: why a value cannot be hashed stably (then
        nothing compiled may be cached on disk), or None.
    """
    values: dict[str, bytes] = {}
    followed: list = []
    seen: set[int] = set()
    todo = list(functions)
    while todo:
        fn = todo.pop()
        fn = getattr(fn, "py_func", fn)
        code = getattr(fn, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        where = _qualified(fn)
        found: list[tuple[str, object]] = []
        namespace = getattr(fn, "__globals__", {})
        found += [r for r in (_resolve(namespace, c) for c in _global_chains(code)) if r]
        for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
            try:
                found.append((name, cell.cell_contents))
            except ValueError:  # a cell not filled yet
                continue
        for name, value in found:
            if _followed(value):
                followed.append(value)
                todo.append(value)
            try:
                values[f"{where}:{name}"] = value_bytes(value)
            except Unhashable as error:
                reason = (
                    f"{name!r}, read by {where}, is {error}: numba compiles its value into "
                    "the machine code, and that value cannot be hashed stably"
                )
                return [], followed, reason
    return sorted(values.items()), followed, None


def digest(values: list[tuple[str, bytes]]) -> bytes:
    """One hash of ``frozen_values``' pairs (each name and value hashed on its own)."""
    h = hashlib.sha256()
    for name, data in values:
        h.update(hashlib.sha256(name.encode()).digest())
        h.update(hashlib.sha256(data).digest())
    return h.digest()
