"""Docs and comments name only repository paths that exist, and never narrate history.

Two checks over the repository:

- **Paths**: the docs (``docs/**/*.md``, ``README.md``, ``CHANGELOG.md``,
  ``mkdocs.yml``) and the comments and docstrings of the sources
  (``seer_env/**/*.py``, ``bench/**/*.py``, ``training/**/*.py``,
  ``tests/**/*.py``, ``examples/**``, ``tools/*.py``, ``cpp/**/*.{hpp,cpp,h}``,
  ``Makefile``, ``CMakeLists.txt``) may name a path that starts with one of the
  repository's top-level folders (``seer_env/``, ``cpp/``, ...) or link to a
  file with a relative Markdown link, or include an SDK header by its include
  name (``seer/model.hpp``: ``cpp/include/seer/``); every such path must exist. Braces
  (``params.{hpp,cpp}``) expand to each name; a placeholder (``<area>``, ``*``)
  must match at least one existing path. The few paths that are generated or
  describe another tree are in ``ALLOWED``, each with its reason.
- **History**: no tracked file mentions a numbered session or issue, or the
  design document that is not in the repository (``HISTORY`` below; this
  file builds its bad examples by concatenation, so it passes its own check).

The scanners are plain functions of text, so the tests at the end prove each
check fails on a bad input.
"""

from __future__ import annotations

import ast
import fnmatch
import glob
import io
import os
import re
import subprocess
import tokenize
from pathlib import Path

import pytest


def _repository_root() -> Path:
    """The folder holding ``pyproject.toml`` above this file (tests may sit in subfolders)."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file() and (parent / "seer_env").is_dir():
            return parent
    raise RuntimeError("repository root not found above " + __file__)


ROOT = _repository_root()
THIS_FILE = Path(__file__).resolve().relative_to(ROOT).as_posix()

# Top-level folders whose paths the docs and comments name. A `benchmarks` folder
# is not in this repository: a path in it is stale and fails.
TOP_LEVEL = ("seer_env", "cpp", "docs", "tests", "examples", "tools", "bench", "training", ".ci")
TOP_LEVEL_STALE = ("benchmarks",)

# Paths that may be named although they are not in the repository, each with why.
# fnmatch patterns on the path as written (after stripping anchors and braces).
ALLOWED = {
    "bench/results": "the bench's default output folder, written by `make bench` (git-ignored)",
    "bench/reference": "where the CHANGELOG's history had the oracles (seer_env/testing/reference)",
    "seer_env/<name>": "a Gymnasium env id (namespace seer_env), not a path",
    "seer_env/pcs_v*": "a Gymnasium env id (namespace seer_env), not a path",
}

# Files not scanned for paths, each with why.
NOT_SCANNED = {
    "seer_env/sdk/templates/*": "the scaffold's templates describe the generated project's tree, "
    "not this repository's",
}

HISTORY = re.compile(r"session [0-9]|issue [0-9]|DESIGN\.md", re.IGNORECASE)

_PREFIXES = "|".join(re.escape(p) for p in TOP_LEVEL + TOP_LEVEL_STALE)
# A path token: a top-level folder, a slash, then path characters. Not preceded by
# a path character (so a `docs` folder inside `build/` or a URL is not a token).
_PATH_TOKEN = re.compile(r"(?<![\w./\-~$])(?:" + _PREFIXES + r")/[\w./\-*<>{},+]*")
# An SDK include name (`seer/model.hpp`): a header of cpp/include/seer/.
_SDK_INCLUDE = re.compile(r"(?<![\w./\-])seer/[\w.]+\.(?:hpp|h)\b")
SDK_INCLUDE_DIR = "cpp/include"
_MD_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_MKDOCS_NAV_PAGE = re.compile(r"^\s*-\s*(?:[^:\n]+:\s*)?([\w./-]+\.md)\s*$", re.MULTILINE)


# -- extracting the text to scan ------------------------------------------------------------------
def python_comments_and_docstrings(source: str) -> str:
    """The comments and docstrings of a Python source, one per line (empty if it does not parse)."""
    parts = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                parts.append(tok.string)
        tree = ast.parse(source)
    except (SyntaxError, tokenize.TokenError, ValueError):
        return ""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                parts.append(doc)
    return "\n".join(parts)


_CPP_TOKENS = re.compile(
    r'R"(?P<delim>[^(\s]{0,16})\(.*?\)(?P=delim)"'  # raw string literal: skipped
    r'|"(?:\\.|[^"\\\n])*"'  # string literal: skipped
    r"|'(?:\\.|[^'\\\n])*'"  # character literal: skipped
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)",
    re.DOTALL,
)


def cpp_comments(source: str) -> str:
    """The ``//`` and ``/* */`` comments of a C or C++ source."""
    return "\n".join(m.group("comment") for m in _CPP_TOKENS.finditer(source) if m.group("comment"))


def hash_comments(source: str) -> str:
    """The ``#`` comments of a Makefile or CMake file (whole-line or after whitespace)."""
    out = []
    for line in source.splitlines():
        m = re.search(r"(?:^|\s)(#.*)$", line)
        if m:
            out.append(m.group(1))
    return "\n".join(out)


# -- finding the paths ----------------------------------------------------------------------------
def _clean(token: str) -> str:
    token = token.split("#", 1)[0].split("::", 1)[0]
    token = re.sub(r":\d+(?:-\d+)?$", "", token)  # file.py:12
    return token.rstrip(".,;:'\"")


def _expand_braces(path: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for choice in m.group(1).split(","):
        out += _expand_braces(path[: m.start()] + choice + path[m.end() :])
    return out


def path_tokens(text: str) -> list[str]:
    """Every repository path named in ``text``, braces expanded.

    Top-level-folder tokens as written; SDK include names (``seer/model.hpp``)
    as their path under ``cpp/include/``.
    """
    found = [f"{SDK_INCLUDE_DIR}/{m.group(0)}" for m in _SDK_INCLUDE.finditer(text)]
    for m in _PATH_TOKEN.finditer(text):
        token = _clean(m.group(0))
        if token.count("/") == 0:
            continue
        found += _expand_braces(token)
    return found


def markdown_links(text: str) -> list[str]:
    """The targets of the relative Markdown links and images in ``text`` (anchors stripped)."""
    out = []
    for m in _MD_LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
            continue  # https:, mailto:, an anchor on the same page
        target = target.split("#", 1)[0]
        if target:
            out.append(target)
    return out


def _allowed(path: str) -> bool:
    return any(fnmatch.fnmatch(path.rstrip("/"), pattern) for pattern in ALLOWED)


def path_exists(path: str, root: Path) -> bool:
    """Whether ``path`` (relative to ``root``) exists; placeholders must match something."""
    if re.search(r"[*<>]", path):
        pattern = re.sub(r"<[^<>/]*>", "*", path)
        return bool(glob.glob(str(root / pattern), recursive=True))
    return (root / path).exists()


def missing_paths(text: str, root: Path, here: Path | None = None) -> list[str]:
    """The repository paths ``text`` names that do not exist under ``root``.

    ``here``: the folder relative Markdown links in ``text`` start from (None: no
    links are checked, only top-level-folder paths).
    """
    missing = []
    for path in path_tokens(text):
        if not _allowed(path) and not path_exists(path, root):
            missing.append(path)
    if here is not None:
        for link in markdown_links(text):
            target = (here / link).resolve()
            try:
                rel = target.relative_to(root.resolve()).as_posix()
            except ValueError:
                missing.append(link)  # outside the repository
                continue
            if not _allowed(rel) and not target.exists():
                missing.append(link)
    return sorted(set(missing))


def mkdocs_missing_pages(text: str, docs_dir: Path) -> list[str]:
    """The pages ``mkdocs.yml``'s nav names that are not in ``docs_dir``."""
    return sorted({p for p in _MKDOCS_NAV_PAGE.findall(text) if not (docs_dir / p).is_file()})


def history_mentions(text: str) -> list[str]:
    """The numbered session/issue and design-document mentions in ``text``."""
    return [m.group(0) for m in HISTORY.finditer(text)]


# -- the files ------------------------------------------------------------------------------------
def _tracked_files() -> list[str]:
    """Tracked files, and new ones git does not ignore (skip: not a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return sorted({f for f in out.decode().split("\0") if f and (ROOT / f).is_file()})


def _scanned(rel: str) -> bool:
    return not any(fnmatch.fnmatch(rel, pattern) for pattern in NOT_SCANNED)


def scanned_text(rel: str) -> tuple[str, bool] | None:
    """What of file ``rel`` is scanned for paths, and whether its Markdown links count.

    None: the file is not one the path check covers.
    """
    path = ROOT / rel
    name = path.name
    top = rel.split("/", 1)[0]
    if not _scanned(rel):
        return None
    if rel in ("README.md", "CHANGELOG.md") or (top == "docs" and name.endswith(".md")):
        return path.read_text(encoding="utf-8"), True
    if rel == "mkdocs.yml":
        return path.read_text(encoding="utf-8"), False
    if rel in ("Makefile", "CMakeLists.txt"):
        return hash_comments(path.read_text(encoding="utf-8")), False
    if top not in ("seer_env", "bench", "training", "tests", "examples", "tools", "cpp"):
        return None
    source = path.read_text(encoding="utf-8", errors="replace")
    if name.endswith(".py"):
        return python_comments_and_docstrings(source), False
    if name.endswith((".hpp", ".cpp", ".h")):
        return cpp_comments(source), False
    if top == "examples":
        if name.endswith(".md"):
            return source, True
        if name in ("CMakeLists.txt", "Makefile") or name.endswith((".cmake", ".toml", ".txt")):
            return hash_comments(source), False
    return None


def test_docs_and_comments_name_only_existing_paths():
    problems = []
    for rel in _tracked_files():
        scanned = scanned_text(rel)
        if scanned is None:
            continue
        text, links = scanned
        here = (ROOT / rel).parent if links else None
        problems += [f"{rel}: {p}" for p in missing_paths(text, ROOT, here)]
    problems += [
        f"mkdocs.yml: nav page {p}"
        for p in mkdocs_missing_pages((ROOT / "mkdocs.yml").read_text(), ROOT / "docs")
    ]
    assert not problems, "paths that do not exist:\n" + "\n".join(problems)


def test_no_tracked_file_narrates_history():
    problems = []
    for rel in _tracked_files():
        data = (ROOT / rel).read_bytes()
        if b"\0" in data:
            continue  # binary (images)
        for line_no, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            for hit in history_mentions(line):
                problems.append(f"{rel}:{line_no}: {hit!r}")
    assert not problems, "history mentions:\n" + "\n".join(problems)


def test_allowlists_are_small_and_used_and_top_level_folders_exist():
    """Every allowlist entry has a reason and is needed; the listed top-level folders exist."""
    assert all(reason.strip() for reason in {**ALLOWED, **NOT_SCANNED}.values())
    files = _tracked_files()
    named = set()
    for rel in files:
        scanned = scanned_text(rel)
        if scanned is not None:
            named.update(p.rstrip("/") for p in path_tokens(scanned[0]))
    assert [a for a in ALLOWED if not any(fnmatch.fnmatch(p, a) for p in named)] == []
    assert [n for n in NOT_SCANNED if not any(fnmatch.fnmatch(f, n) for f in files)] == []
    assert [p for p in TOP_LEVEL if not (ROOT / p).is_dir()] == []
    assert [p for p in TOP_LEVEL_STALE if (ROOT / p).exists()] == []


# -- each check can fail ---------------------------------------------------------------------
@pytest.fixture
def tree(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# page\n")
    (tmp_path / "cpp" / "models" / "aircraft").mkdir(parents=True)
    for name in ("params.hpp", "params.cpp"):
        (tmp_path / "cpp" / "models" / "aircraft" / name).write_text("")
    (tmp_path / "tests" / "runtime").mkdir(parents=True)
    (tmp_path / "cpp" / "include" / "seer").mkdir(parents=True)
    (tmp_path / "cpp" / "include" / "seer" / "model.hpp").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("see `cpp/models/aircraft/params.hpp`.", []),
        ("see cpp/models/aircraft/params.{hpp,cpp}", []),
        ("see cpp/models/aircraft/params.{hpp,cpp,h}", ["cpp/models/aircraft/params.h"]),
        ("tests live in `tests/<area>/`", []),
        ("docs/page.md#a-heading, and docs/nope.md.", ["docs/nope.md"]),
        ("(seer_env/workloads/aircraft_layout.py)", ["seer_env/workloads/aircraft_layout.py"]),
        ("`benchmarks/policy.py`", ["benchmarks/policy.py"]),
        ("the SDK's `seer/model.hpp`", []),
        ("the runtime's `seer/parallel_executor.hpp`", ["cpp/include/seer/parallel_executor.hpp"]),
        ("`examples/<none>/x.py`", ["examples/<none>/x.py"]),
        ("written to `bench/results/` (allowed: generated)", []),
        ("build/docs/page.md and https://example.org/docs/x.md are not repository paths", []),
    ],
)
def test_missing_paths_finds_paths_that_do_not_exist(tree, text, missing):
    assert missing_paths(text, tree) == missing


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("[a page](page.md) and ![img](page.md#x)", []),
        ("[gone](gone.md)", ["gone.md"]),
        ("[outside](../../shared/ECOSYSTEM.md)", ["../../shared/ECOSYSTEM.md"]),
        ("[web](https://example.org/x.md), [here](#section)", []),
    ],
)
def test_missing_paths_checks_relative_markdown_links(tree, text, missing):
    assert missing_paths(text, tree, here=tree / "docs") == missing


def test_mkdocs_nav_pages_must_exist(tree):
    nav = "nav:\n  - Home: page.md\n  - Results: benchmark-results.md\n"
    assert mkdocs_missing_pages(nav, tree / "docs") == ["benchmark-results.md"]


@pytest.mark.parametrize(
    ("text", "hits"),
    [
        ("measured in Session " + "8", ["Session " + "8"]),
        ("the target of issue " + "21", ["issue " + "2"]),
        ("kept simple (DESIGN" + ".md 4b)", ["DESIGN" + ".md"]),
        ("a session-scoped fixture; the issue's fix", []),
    ],
)
def test_history_mentions_are_found(text, hits):
    assert history_mentions(text) == hits


def test_only_comments_and_docstrings_of_sources_are_scanned():
    source = (
        '"""Module docs: see cpp/gone.hpp."""\n'
        'PATH = "cpp/also_gone.hpp"  # comment: tools/gone.py\n'
        "def f():\n"
        '    """Function docs: docs/gone.md."""\n'
    )
    text = python_comments_and_docstrings(source)
    assert sorted(path_tokens(text)) == ["cpp/gone.hpp", "docs/gone.md", "tools/gone.py"]
    cpp = 'auto s = "docs/in_a_string.md"; // see tests/gone.py\n/* and cpp/gone.cpp */\n'
    assert path_tokens(cpp_comments(cpp)) == ["tests/gone.py", "cpp/gone.cpp"]
    make = "bench:\t# see docs/gone.md\n\tpython tools/real_command.py\n"
    assert path_tokens(hash_comments(make)) == ["docs/gone.md"]


def test_the_repository_scan_reports_a_bad_path(tmp_path, monkeypatch):
    """The whole-repository test fails on one file naming a missing path."""
    bad = tmp_path / "docs" / "bad.md"
    bad.parent.mkdir()
    bad.write_text("See `seer_env/no_such_module.py` and [x](no_such_page.md).\n")
    assert missing_paths(bad.read_text(), ROOT, here=ROOT / "docs") == [
        "no_such_page.md",
        "seer_env/no_such_module.py",
    ]


def test_root_is_this_repository():
    assert (ROOT / "seer_env" / "__init__.py").is_file()
    assert os.path.isfile(ROOT / THIS_FILE)
