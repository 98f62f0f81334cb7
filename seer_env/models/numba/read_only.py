"""Read-only records in compiled code: refused when the handler is compiled.

numba has no read-only records: a write through a record of a read-only
array (``snapshot[i]["x"] = ...``, ``params.x = ...``) compiles and writes,
and ``params`` is shared by every thread. So before a handler is compiled,
its untyped IR is searched for writes whose target is, through indexing,
field and attribute reads and plain assignments (both arms of a branch),
one of the handler's read-only arguments; and for such a value passed to a
``@seer_env.kernel`` helper or a ``numba.njit`` function that writes it, or
given to a method that writes in place (``fill``, ``sort``, ...). Each write
found is a ``NumbaCompileError`` naming the handler, the argument and the
line. What it does not follow (a record stored in a container, a numpy
function with ``out=``) is left to checked mode and ``verify``, which run the
model interpreted, where the records are read-only arrays.

``global_array_writes`` finds a handler's writes to a global numpy array,
which numba freezes read-only: compile.py names them when numba refuses one.
"""

from __future__ import annotations

import inspect
import os

import numpy as np
from numba.core import ir
from numba.core.compiler import run_frontend

# The read-only arguments of each hook, by position (seer_env.models.numba's table).
READ_ONLY = {
    "reset": (1,),
    "on_init": (2, 3),
    "on_step_begin": (2, 3),
    "on_action": (2, 3),
    "on_event": (2, 3),
    "write_snapshot": (0, 2),
    "observe": (1, 2, 3),
    "reward": (1, 2, 3),
    "terminated": (1, 2, 3),
    "truncated": (1, 2, 3),
    "info": (1, 2, 3),
    "global_state": (0, 1, 2),
    "totals": (0, 1),
}
# Expressions that read a part of their value (an element, a field, an attribute).
_READS = ("getitem", "static_getitem", "getattr")
# Methods of numpy arrays and records that write their object.
_WRITING_METHODS = frozenset({"fill", "sort", "put", "itemset", "partition", "setfield"})


def _python_function(obj):
    """The Python function behind a helper or jitted function, or None."""
    if getattr(obj, "_seer_kernel", False):
        return obj
    py_func = getattr(obj, "py_func", None)  # a numba dispatcher
    return py_func if inspect.isfunction(py_func) else None


class _Writes:
    """Finds the writes to read-only arguments in one function's IR."""

    def __init__(self, fn, read_only: tuple[int, ...], seen: set):
        self.seen = seen
        self.ir = run_frontend(fn)
        names = self.ir.arg_names
        self.read_only = {i: names[i] for i in read_only if i < len(names)}
        self._root_memo: dict[str, int | None] = {}

    def _root(self, var: ir.Var, visiting: frozenset = frozenset()) -> int | None:
        """The read-only argument position ``var`` may be part of, or None."""
        name = var.name
        if name in self._root_memo:
            return self._root_memo[name]
        if name in visiting:
            return None
        visiting = visiting | {name}
        found = None
        for value in self.ir._definitions.get(name, ()):
            if isinstance(value, ir.Arg):
                found = value.index if value.index in self.read_only else None
            elif isinstance(value, ir.Var):
                found = self._root(value, visiting)
            elif isinstance(value, ir.Expr) and value.op in (
                "getitem",
                "static_getitem",
                "getattr",
            ):
                found = self._root(value.value, visiting)
            if found is not None:
                break
        self._root_memo[name] = found
        return found

    def _defined_as(self, var: ir.Var):
        definitions = self.ir._definitions.get(var.name, ())
        return definitions[0] if len(definitions) == 1 else None

    def find(self) -> list[tuple[str, str]]:
        """``(argument, what)`` of every write found (helpers followed), in line order."""
        found = []
        for block in self.ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem, ir.SetAttr)):
                    position = self._root(stmt.target)
                    if position is not None:
                        argument = self.read_only[position]
                        found.append((argument, f"line {stmt.loc.line} writes `{argument}`"))
                elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                    if stmt.value.op == "call":
                        found += self._call(stmt.value, stmt.loc.line)
        return found

    def _call(self, call: ir.Expr, line: int) -> list[tuple[str, str]]:
        callee = self._defined_as(call.func)
        if isinstance(callee, ir.Expr) and callee.op == "getattr":
            position = self._root(callee.value)
            if position is not None and callee.attr in _WRITING_METHODS:
                argument = self.read_only[position]
                return [(argument, f"line {line} calls .{callee.attr}() on `{argument}`")]
            return []
        if not isinstance(callee, (ir.Global, ir.FreeVar)):
            return []
        helper = _python_function(callee.value)
        if helper is None:
            return []
        passed = {i: self._root(arg) for i, arg in enumerate(call.args)}
        positions = tuple(i for i, p in passed.items() if p is not None)
        key = (helper, positions)
        if not positions or key in self.seen:
            return []
        self.seen.add(key)
        inner = _Writes(helper, positions, self.seen)
        position_of = {name: i for i, name in inner.read_only.items()}
        found = []
        for inner_argument, what in inner.find():
            argument = self.read_only[passed[position_of[inner_argument]]]
            found.append(
                (argument, f"line {line} passes `{argument}` to {helper.__name__}, whose {what}")
            )
        return found


def writes_to_read_only(hook: str, fn) -> list[str]:
    """What handler ``fn`` of ``hook`` writes among its read-only records, one line each."""
    fn = _python_function(fn) or fn
    if not inspect.isfunction(fn):
        return []
    return [what for _, what in _Writes(fn, READ_ONLY[hook], set()).find()]


class _GlobalWrites:
    """Finds the writes to module-level (or closure) numpy arrays in one function's IR."""

    def __init__(self, fn, seen: set):
        self.fn = fn
        self.seen = seen
        self.ir = run_frontend(fn)

    def _array_global(self, var: ir.Var, visiting: frozenset = frozenset()) -> str | None:
        """The name of the global array ``var`` may be part of, or None."""
        if var.name in visiting:
            return None
        visiting = visiting | {var.name}
        for value in self.ir._definitions.get(var.name, ()):
            if isinstance(value, (ir.Global, ir.FreeVar)):
                if isinstance(value.value, np.ndarray):
                    return value.name
            elif isinstance(value, ir.Var):
                found = self._array_global(value, visiting)
                if found is not None:
                    return found
            elif isinstance(value, ir.Expr) and value.op in _READS:
                found = self._array_global(value.value, visiting)
                if found is None and value.op == "getattr":
                    found = self._module_array(value)
                if found is not None:
                    return found
        return None

    def _module_array(self, getattr_expr: ir.Expr) -> str | None:
        """``module.NAME`` when ``getattr_expr`` reads a numpy array of a module, else None."""
        definitions = self.ir._definitions.get(getattr_expr.value.name, ())
        for value in definitions:
            if isinstance(value, (ir.Global, ir.FreeVar)) and inspect.ismodule(value.value):
                if isinstance(getattr(value.value, getattr_expr.attr, None), np.ndarray):
                    return f"{value.name}.{getattr_expr.attr}"
        return None

    def find(self) -> list[tuple[str, str, str, int]]:
        """``(global, function, file, line)`` of every write found (helpers followed)."""
        found = []
        for block in self.ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem, ir.SetAttr)):
                    name = self._array_global(stmt.target)
                    if name is not None:
                        found.append((name, *self._where(), stmt.loc.line))
                elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                    if stmt.value.op == "call":
                        found += self._call(stmt.value, stmt.loc.line)
        return found

    def _where(self) -> tuple[str, str]:
        """The qualified name and file name of the function searched."""
        return self.fn.__qualname__, os.path.basename(self.fn.__code__.co_filename)

    def _call(self, call: ir.Expr, line: int) -> list[tuple[str, str, str, int]]:
        definitions = self.ir._definitions.get(call.func.name, ())
        callee = definitions[0] if len(definitions) == 1 else None
        if isinstance(callee, ir.Expr) and callee.op == "getattr":
            name = self._array_global(callee.value)
            if name is not None and callee.attr in _WRITING_METHODS:
                return [(name, *self._where(), line)]
            return []
        if not isinstance(callee, (ir.Global, ir.FreeVar)):
            return []
        helper = _python_function(callee.value)
        if helper is None or helper in self.seen:
            return []
        self.seen.add(helper)
        return _GlobalWrites(helper, self.seen).find()


def global_array_writes(fn) -> list[tuple[str, str, str, int]]:
    """``(global, function, file, line)`` of each write of handler ``fn`` to a global array.

    ``function`` and ``file``: the qualified name and file name of the
    function that writes (the handler or a helper it calls).
    numba compiles a global array into the code as a read-only constant: such
    a write does not compile (a ``TypingError`` on a ``readonly array``).
    Helpers (``@seer_env.kernel``, ``numba.njit``) the handler calls are followed.
    """
    fn = _python_function(fn) or fn
    if not inspect.isfunction(fn):
        return []
    return _GlobalWrites(fn, set()).find()
