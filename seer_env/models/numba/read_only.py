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
"""

from __future__ import annotations

import inspect

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
