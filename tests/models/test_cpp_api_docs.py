"""docs/cpp-api.md names every public declaration of the installed SDK headers.

The headers' public surface is read with a small declaration scanner (comments
and strings removed, statements split at ``;``, ``{`` and ``}``, access labels
followed): namespace-scope types, functions, constants and aliases, public and
protected members of classes and structs, and ``SEER_`` macros. A name the page
does not mention in backquotes fails the test.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cpp-api.md"
# What CMakeLists.txt installs: every header of cpp/include/seer (test_sdk_headers.py).
SDK = ROOT / "cpp" / "include" / "seer"
_NOT_NAMES = {"static_assert", "operator", "if", "return", "template", "constexpr", "typename"}


def sdk_headers() -> list[Path]:
    return sorted(SDK.iterdir())


def _strip(source: str) -> str:
    source = re.sub(r"#define[^\n]*\\\n(?:[^\n]*\\\n)*[^\n]*", "", source)  # macro bodies
    source = re.sub(r"//[^\n]*", "", source)
    source = re.sub(r"alignas ?\(\w+\)", "", source)
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    source = re.sub(r'"(\\.|[^"\\])*"', '""', source)
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith("#")]
    return "\n".join(lines)


def _declared_name(statement: str) -> str | None:
    s = re.sub(r"\s+", " ", statement).strip()
    s = re.sub(r"^template ?<.*?> ?", "", s)
    if not s or s.startswith(("using namespace", "friend", "static_assert")) or "operator" in s:
        return None
    if s.startswith("using"):
        m = re.match(r"using (\w+) ?=", s)
        return m.group(1) if m else None
    if m := re.match(r"(?:enum class|enum|class|struct) (\w+)", s):
        return m.group(1)
    head = s.split("=")[0] if "(" not in s.split("=")[0] else s
    if m := re.search(r"(~?\w+) ?\(", head):  # a function: the name before the first '('
        name = m.group(1)
        return None if name in _NOT_NAMES or name.startswith("~") else name
    if m := re.search(r"(\w+) ?(\[[^\]]*\])? ?$", head.strip()):  # a variable or field
        return m.group(1)
    return None


def _declared_names(statement: str) -> set[str]:
    """Names of one statement; ``float low = 0, high = 0;`` declares two."""
    head = statement.split("(")[0]
    if "(" in statement or "," not in head or "<" in head:
        name = _declared_name(statement)
        return {name} if name else set()
    first, *rest = head.split(",")
    names = {_declared_name(first)} | {_declared_name("int " + r) for r in rest}
    return {n for n in names if n}


def public_names(header: Path) -> set[str]:
    """Names a model author can use: public/protected members and namespace-scope names."""
    text = _strip(header.read_text())
    names: set[str] = set(re.findall(r"#define (SEER_\w+)", header.read_text()))
    # scope stack: ("namespace"|"class"|"body", access-visible)
    stack: list[tuple[str, bool]] = []
    statement = ""
    i = 0
    while i < len(text):
        c = text[i]
        if c in ";{}":
            s = re.sub(r"\s+", " ", statement).strip()
            visible = all(v for _, v in stack)
            at_decl_scope = not stack or stack[-1][0] in ("namespace", "class")
            label = re.fullmatch(r"(?:.*\s)?(public|private|protected)\s*:\s*(.*)", s, flags=re.S)
            if label and stack and stack[-1][0] == "class":
                stack[-1] = ("class", label.group(1) != "private")
                s = label.group(2).strip()
                visible = all(v for _, v in stack)
            if c == "{":
                if re.match(r"namespace\b", s):
                    stack.append(("namespace", "detail" not in s))
                elif re.match(r"(?:template ?<.*?> ?)?(class|struct|enum class|enum)\b", s):
                    if visible and at_decl_scope and (name := _declared_name(s)):
                        names.add(name)
                    stack.append(("class", not s.startswith("class")))
                else:  # a function body or an initializer
                    head = re.split(r"(?<!:):(?!:)", s)[0]  # before a constructor's initializers
                    if visible and at_decl_scope and (name := _declared_name(head)):
                        names.add(name)
                    stack.append(("body", True))
            elif c == "}":
                if stack:
                    stack.pop()
            elif visible and at_decl_scope:
                names.update(_declared_names(s))
            statement = ""
        elif stack and stack[-1][0] == "body":
            pass  # inside a function body or initializer: nothing declared
        else:
            statement += c
        i += 1
    return names


def test_the_scanner_reads_what_a_model_author_uses():
    model = public_names(SDK / "model.hpp")
    assert {"ModelBase", "allocate", "self_state", "state_of", "snapshot", "spec_"} <= model
    assert {"ActionView", "discrete", "reset_states", "write_snapshot"} <= model
    context = public_names(SDK / "context.hpp")
    assert {"Context", "schedule", "now", "self", "rng"} <= context
    assert not {"violation", "spec_", "self_", "handling_"} & context  # private
    assert "SEER_MODEL_MODULE" in public_names(SDK / "python_plugin.hpp")
    assert "make_module" not in public_names(SDK / "python_plugin.hpp")  # plugin_detail


@pytest.mark.parametrize("header", sdk_headers(), ids=lambda p: p.name)
def test_every_public_declaration_is_documented(header):
    page = PAGE.read_text()
    documented = set(re.findall(r"`([^`\n]+)`", page))
    words = set()
    for snippet in documented:
        words.update(re.findall(r"~?\w+", snippet))
    missing = sorted(public_names(header) - words)
    assert not missing, f"docs/cpp-api.md does not mention these from seer/{header.name}: {missing}"
