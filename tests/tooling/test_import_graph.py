"""The modules of ``seer_env/`` import each other without a circle.

Every ``import`` and ``from ... import`` of every module counts, those inside
functions included (an import deferred into a function hides a circle; it does
not remove it). An edge goes to the module named: ``from seer_env import stpa``
to ``seer_env.stpa`` (a submodule), ``from seer_env.env import X`` to
``seer_env.env``, ``from seer_env import make`` to ``seer_env`` (a name of the
package's ``__init__``). The parent packages Python initialises on the way are
not edges: a package's ``__init__`` may import its own modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "seer_env"
ROOT = Path(__file__).resolve().parents[2]


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` under ``root / package``."""
    files = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def imported_modules(
    name: str, source: str, modules: set[str], is_package: bool = False
) -> set[str]:
    """The modules of ``modules`` that module ``name``'s ``source`` imports anywhere."""
    found = set()
    # The package a relative import counts from: the module's own for an __init__.
    here = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            origin = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                found.add(submodule if submodule in modules else origin)
    return {m for m in found if m in modules and m != name}


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    files = module_files(root, package)
    # The compiled extension is a module too (a leaf: it imports nothing of ours).
    modules = set(files) | {f"{package}._core"}
    return {
        name: imported_modules(name, path.read_text(), modules, path.name == "__init__.py")
        for name, path in files.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_seer_env_has_no_import_circle():
    cycle = find_cycle(import_graph(ROOT, PACKAGE))
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_graph_sees_every_form_of_import(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg import a\n")
    (pkg / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "b.py").write_text("import pkg.sub.c\nfrom pkg import name\n")
    (pkg / "sub" / "__init__.py").write_text("from .c import x\n")
    (pkg / "sub" / "c.py").write_text("from ..a import f\nfrom .. import b\n")
    assert import_graph(tmp_path, "pkg") == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b"},  # inside a function, relative
        "pkg.b": {"pkg.sub.c", "pkg"},  # `import x.y`; a name of the package's __init__
        "pkg.sub": {"pkg.sub.c"},  # relative from a package's __init__
        "pkg.sub.c": {"pkg.a", "pkg.b"},  # two levels up
    }


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": {"b"}, "b": {"b"}}, ["b", "b"]),
        ({"a": {"b", "c"}, "b": set(), "c": {"d"}, "d": {"c"}}, ["c", "d", "c"]),
    ],
)
def test_find_cycle_finds_a_circle_and_only_one(graph, expected):
    assert find_cycle(graph) == expected
