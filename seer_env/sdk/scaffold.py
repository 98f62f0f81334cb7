"""Write the C++ project of a ``PythonModel`` prototype (``python -m seer_env.sdk.scaffold``).

From the prototype's declaration (``state_dtype``, ``public_fields``,
``payload_dtype``, ``params``, ``event_kinds``, ``info_keys``, ``total_keys``)
and a default-config instance (sizes, timing, spaces) this writes:

- ``src/cpp/<name>.cpp``: the ``State``/``Public``/``Payload`` structs with
  ``static_assert``s on their layout, the declaration (the one table the
  registry, the env signature and the docs read), the config readers, one
  stub per hook the prototype defines (a no-op that keeps the contract, under
  the prototype's Python source as a comment, marked ``PORT``), and the
  ``SEER_MODEL_MODULE`` entry point;
- ``CMakeLists.txt`` and ``pyproject.toml`` (``pip install
  --no-build-isolation DEST``);
- ``src/<name>/__init__.py``: registers the model on import;
  ``parallel_env(implementation="cpp"|"python", **config)`` switches port and
  prototype.

The generated project builds and passes ``check_contract`` and
``assert_serial_equivalent`` before a line is edited; ``verify(port,
prototype)`` then shows what remains to port.

The files are rendered from ``templates/`` (``model.cpp.in``, ``hooks.cpp.in``
with the hook stubs, ``CMakeLists.txt.in``, ``pyproject.toml.in``,
``__init__.py.in``): ``@name@`` stands for a value; a line holding only a
placeholder is replaced by its lines (none: the line goes).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import keyword
import math
import re
import sys
import textwrap
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from seer_env.models.python_model import PythonModel

__all__ = ["load_prototype", "main", "new_cpp_project"]

_CPP_TYPES = {
    "f8": "double",
    "f4": "float",
    "i8": "std::int64_t",
    "i4": "std::int32_t",
    "i2": "std::int16_t",
    "i1": "std::int8_t",
    "u8": "std::uint64_t",
    "u4": "std::uint32_t",
    "u2": "std::uint16_t",
    "u1": "std::uint8_t",
    "b1": "bool",
}
_HOOKS = (
    "reset",
    "on_init",
    "on_step_begin",
    "on_action",
    "on_event",
    "after_snapshot",
    "observe",
    "reward",
    "terminated",
    "truncated",
    "info",
    "global_state",
    "totals",
)
_TEMPLATES = Path(__file__).resolve().parent / "templates"
# Names the generated C++ declares itself, beside the model's class.
_GENERATED_TYPES = ("State", "Public", "Payload")
# C++17 keywords and alternative tokens: not usable as field names.
_CPP_KEYWORDS = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t
    char32_t class compl const constexpr const_cast continue decltype default delete do double
    dynamic_cast else enum explicit export extern false float for friend goto if inline int long
    mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast return short signed sizeof static static_assert static_cast struct
    switch template this thread_local throw true try typedef typeid typename union unsigned using
    virtual void volatile wchar_t while xor xor_eq""".split()
)
_MARKER = "registered on import"  # in every generated __init__.py (a re-scaffold may reuse it)
_PLACEHOLDER = re.compile(r"@([a-z_]+)@")


def _render(template: str, values: dict[str, str | Sequence[str]]) -> str:
    """``templates/<template>`` with its placeholders replaced by ``values``.

    A line that is one placeholder takes the value's lines (a sequence of
    lines, or a string); any other placeholder takes a string.
    """
    lines = []
    for line in (_TEMPLATES / template).read_text().split("\n"):
        whole = _PLACEHOLDER.fullmatch(line)
        if whole:
            value = values[whole.group(1)]
            lines += [value] if isinstance(value, str) else list(value)
        else:
            lines.append(_PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), line))
    return "\n".join(lines)


def _hook_templates() -> dict[str, str]:
    """The stub of each hook, from ``templates/hooks.cpp.in`` (sections after ``//@@ hook``)."""
    stubs: dict[str, list[str]] = {}
    current = None
    for line in (_TEMPLATES / "hooks.cpp.in").read_text().splitlines():
        if line.startswith("//@@ "):
            current = stubs.setdefault(line[len("//@@ ") :].strip(), [])
        elif current is not None:
            current.append(line)
    return {hook: "\n".join(lines) for hook, lines in stubs.items()}


def load_prototype(target: str) -> type[PythonModel]:
    """``"pkg.module:Class"`` -> the ``PythonModel`` subclass (ValueError otherwise)."""
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"prototype must be 'pkg.module:Class', got {target!r}")
    module = importlib.import_module(module_name)
    cls = module
    for part in class_name.split("."):
        cls = getattr(cls, part, None)
    if not (isinstance(cls, type) and issubclass(cls, PythonModel)):
        raise ValueError(f"prototype {target!r} is not a seer_env.PythonModel subclass")
    return cls


def _snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    s = re.sub(r"\W+", "_", s).strip("_")
    return s if s.isidentifier() and not keyword.iskeyword(s) else f"model_{s}"


def _struct(name: str, dtype: np.dtype) -> list[str]:
    """A C++ struct with the dtype's fields, and static_asserts on its layout."""
    lines = [f"struct {name} {{"]
    for field in dtype.names:
        ftype, offset = dtype.fields[field][:2]
        base = ftype.base
        if base.names is not None:
            raise ValueError(f"{name}.{field}: nested records are not scaffolded yet")
        code = base.str[1:]
        if code not in _CPP_TYPES:
            raise ValueError(f"{name}.{field}: dtype {base} has no C++ type here")
        dims = "".join(f"[{n}]" for n in ftype.shape)
        lines.append(f"  {_CPP_TYPES[code]} {field}{dims};")
    lines.append("};")
    size = dtype.itemsize
    lines.append(f'static_assert(sizeof({name}) == {size}, "{name}: the size of its dtype");')
    for field in dtype.names:
        offset = dtype.fields[field][1]
        lines.append(
            f'static_assert(offsetof({name}, {field}) == {offset}, "{name}.{field}: its offset");'
        )
    return lines


def _record(record: str, struct: str, dtype: np.dtype) -> str:
    fields = ", ".join(f"SEER_FIELD({struct}, {f})" for f in dtype.names)
    return (
        f'  w.records.push_back(seer::checked_record("{record}", sizeof({struct}),\n'
        f"                                           {{{fields}}}, w.records));"
    )


def _cpp_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(value: float) -> str:
    value = float(value)
    if math.isinf(value):
        return ("-" if value < 0 else "") + "std::numeric_limits<double>::infinity()"
    return repr(value)


def _param_row(p: dict[str, Any]) -> str:
    if p.get("default") is None:
        raise ValueError(f"param {p['name']!r}: a derived default is not scaffolded yet")
    doc = _cpp_string(p.get("doc", ""))
    if p["type"] == "int":
        row = f"seer::int_param({_cpp_string(p['name'])}, {int(p['default'])}, "
        row += f"{int(p['low'])}, {int(p['high'])}, {doc})"
    else:
        make = "positive_param" if p.get("low_open") else "real_param"
        row = f"seer::{make}({_cpp_string(p['name'])}, {_number(p['default'])}, "
        row += f"{_number(p['low'])}, {_number(p['high'])}, {doc})"
    return f"seer::capped({row})" if p.get("high_is_cap") else row


def _float(v: float) -> str:
    if math.isinf(v):
        return ("-" if v < 0 else "") + "kInf"
    return f"{float(v)!r}f"


def _floats(values: list[float]) -> str:
    one = _float
    if len(set(values)) == 1:
        return f"assign({len(values)}, {one(values[0])})"
    return "assign({" + ", ".join(one(v) for v in values) + "})"


def _source_comment(cls: type, hook: str) -> list[str]:
    try:
        source = inspect.getsource(getattr(cls, hook))
    except (OSError, TypeError):
        return [f"  // PORT: {cls.__name__}.{hook} (source not available)"]
    lines = [f"  // PORT: {cls.__name__}.{hook}, the prototype's code:"]
    lines += [f"  //   {ln}".rstrip() for ln in textwrap.dedent(source).splitlines()]
    return lines


def _defines(cls: type, hook: str) -> bool:
    return getattr(cls, hook) is not getattr(PythonModel, hook)


def _hook_stubs(cls: type) -> list[str]:
    """One C++ override per hook the prototype defines: a contract-keeping no-op."""
    stubs = _hook_templates()
    # observe and reward are required by Model; on_action, on_event and on_init
    # are written too: always.
    required = ("observe", "reward", "on_action", "on_event", "on_init")
    out = []
    for hook in _HOOKS:
        if not (_defines(cls, hook) or hook in required):
            continue
        if _defines(cls, hook):
            out += _source_comment(cls, hook)
        out.append(stubs[hook])
        out.append("")
    return out


def _cpp_source(cls: type[PythonModel], name: str) -> str:
    spec = cls.workload_spec()
    layout = _default_instance(cls)._runtime_layout()
    model_spec, state, public = layout["spec"], layout["state_dtype"], layout["public_dtype"]
    payload = layout["payload_dtype"]
    act = model_spec["action"]
    records = [_record("state", "State", state), _record("public", "Public", public)]
    if payload is not None:
        records.append(_record("payload", "Payload", payload))
    kinds = [
        f"constexpr seer::EventKind k{_camel(kind)} = {i};  // {kind}"
        for i, kind in enumerate(spec["event_kinds"])
    ]
    obs_bounds = []
    if model_spec["obs_dim"]:
        obs_bounds = [
            f"    spec_.obs_low.{_floats(model_spec['obs_low'])};",
            f"    spec_.obs_high.{_floats(model_spec['obs_high'])};",
        ]
    state_bounds = []
    if model_spec["state_dim"]:
        state_bounds = [
            f"    spec_.state_dim = {model_spec['state_dim']};",
            f"    spec_.state_low = {_float(model_spec['state_low'])};",
            f"    spec_.state_high = {_float(model_spec['state_high'])};",
        ]
    return _render(
        "model.cpp.in",
        {
            "name": name,
            "name_string": _cpp_string(name),
            "prototype": f"{cls.__module__}.{cls.__qualname__}",
            "klass": _klass(name),
            "state_struct": _struct("State", state),
            "public_struct": _struct("Public", public),
            "payload_struct": [*_struct("Payload", payload), ""] if payload is not None else [],
            "event_kinds": [*kinds, ""] if kinds else [],
            "summary": _cpp_string(spec["summary"]),
            "params": ",\n              ".join(_param_row(p) for p in spec["params"]),
            "info_keys": ", ".join(map(_cpp_string, spec["info_keys"])),
            "total_keys": ", ".join(map(_cpp_string, spec["total_keys"])),
            "event_kind_names": ", ".join(map(_cpp_string, spec["event_kinds"])),
            "records": records,
            "param_reads": [
                f"    {p['name']}_ = params.{'integer' if p['type'] == 'int' else 'real'}"
                f'("{p["name"]}");'
                for p in spec["params"]
            ],
            "agent_prefix": _cpp_string(model_spec["agent_prefix"]),
            "num_entities": str(model_spec["num_entities"]),
            "num_agents": str(model_spec["num_agents"]),
            "lookahead": repr(model_spec["lookahead"]),
            "dt": repr(model_spec["dt"]),
            "obs_dim": str(model_spec["obs_dim"]),
            "obs_bounds": obs_bounds,
            "action": f"{'true' if act['discrete'] else 'false'}, {act['n']}, {act['dim']}, "
            f"{_float(act['low'])}, {_float(act['high'])}",
            "state_bounds": state_bounds,
            "public_copies": [f"    copy(p.{f}, s.{f});" for f in public.names],
            "hooks": _hook_stubs(cls),
            "param_members": [
                f"  {'std::int64_t' if p['type'] == 'int' else 'double'} {p['name']}_ = 0;"
                for p in spec["params"]
            ],
        },
    )


def _camel(text: str) -> str:
    return "".join(p.title() for p in re.split(r"\W+|_", text) if p) or "Kind"


def _shadowed(name: str) -> str | None:
    """What a distribution and package called ``name`` would shadow, or None."""
    if name.replace("-", "_").lower() in ("seer_env", "seer", "_core"):
        return "this package, seer_env"
    if name in sys.stdlib_module_names:
        return f"the standard library's {name!r}"
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return None
    origin = Path(spec.origin) if spec.origin else None
    if origin is not None and origin.is_file() and _MARKER in origin.read_text(errors="ignore"):
        return None  # an earlier port of this prototype
    return f"the installed module {name!r} ({spec.origin})"


def _check_names(cls: type[PythonModel], name: str, layout: dict) -> None:
    """ValueError naming every name the generated project could not build or would shadow."""
    problems = []
    if "<locals>" in cls.__qualname__:
        problems.append(
            f"{cls.__qualname__} is defined inside a function: the package must import it by "
            "module path"
        )
    shadowed = _shadowed(name)
    if shadowed:
        problems.append(
            f"the package would be called {name!r} and shadow {shadowed}: set a class attribute "
            f"name = '...' on {cls.__name__}"
        )
    records = {"state_dtype": layout["state_dtype"], "payload_dtype": layout["payload_dtype"]}
    for what, dtype in records.items():
        for field in dtype.names if dtype is not None else ():
            if field in _CPP_KEYWORDS or not field.isidentifier() or field.startswith("__"):
                problems.append(
                    f"{what} field {field!r} is not a C++ identifier (a keyword or reserved): "
                    "rename it"
                )
    kinds: dict[str, str] = {}
    for kind in cls.event_kinds:
        constant = f"k{_camel(kind)}"
        if constant in kinds:
            problems.append(
                f"event kinds {kinds[constant]!r} and {kind!r} would both be {constant}: rename one"
            )
        kinds[constant] = kind
    for p in cls.workload_spec()["params"]:
        if not p["name"].isidentifier() or p["name"] in _CPP_KEYWORDS:
            problems.append(f"param {p['name']!r} is not a C++ identifier: rename it")
    if problems:
        raise ValueError(f"cannot scaffold {cls.__qualname__}: " + "; ".join(problems))


def _klass(name: str) -> str:
    """The C++ class of the model: CamelCase of ``name``, never a generated struct's name."""
    klass = "".join(part.title() for part in name.split("_"))
    return f"{klass}Model" if klass in _GENERATED_TYPES else klass


def _default_instance(cls: type[PythonModel]) -> PythonModel:
    try:
        return cls.from_config({})
    except TypeError as error:
        raise ValueError(
            f"prototype {cls.__qualname__} cannot be built with its default config ({error}): "
            "the scaffold reads sizes and spaces from cls(); give every __init__ argument a "
            "default"
        ) from None


def new_cpp_project(prototype: str | type[PythonModel], dest: str | Path) -> list[Path]:
    """Write the C++ project of ``prototype`` into ``dest``; returns the files written.

    Args:
        prototype: ``"pkg.module:Class"`` or the ``PythonModel`` subclass (it
            must be importable by that module path from the built package).
        dest: a folder that does not exist yet, or is empty.

    Raises:
        ValueError: ``dest`` is a file or holds files; the prototype cannot be
            built with its default config; or a name would not build in C++ or
            would shadow a package (a C++ keyword as a field, two event kinds
            with one constant, a package named like a standard or installed
            module): the message names each.

    Warns:
        UserWarning: the prototype declares no ``params``.
    """
    cls = load_prototype(prototype) if isinstance(prototype, str) else prototype
    if not (isinstance(cls, type) and issubclass(cls, PythonModel)):
        raise ValueError(f"prototype must be a PythonModel subclass, got {prototype!r}")
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise ValueError(f"dest must be a new or empty folder, got {str(dest)!r} (a file)")
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"dest must be a new or empty folder, got {str(dest)!r} (not empty)")
    name = _snake(cls.name or cls.__name__)
    _check_names(cls, name, _default_instance(cls)._runtime_layout())
    if not cls.params:
        warnings.warn(
            f"{cls.__qualname__} declares no params: the port will have no parameters (its "
            "config is fixed); declare params (docs/custom-models.md) to make sizes and rates "
            "configurable",
            UserWarning,
            stacklevel=2,
        )
    prototype_names = {
        "name": name,
        "prototype": f"{cls.__module__}.{cls.__qualname__}",
        "module": cls.__module__,
        "qualname": cls.__qualname__,
    }
    files = {
        dest / "CMakeLists.txt": _render("CMakeLists.txt.in", prototype_names),
        dest / "pyproject.toml": _render("pyproject.toml.in", prototype_names),
        dest / "src" / "cpp" / f"{name}.cpp": _cpp_source(cls, name),
        dest / "src" / name / "__init__.py": _render("__init__.py.in", prototype_names),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return list(files)


def main(argv: list[str] | None = None) -> int:
    """``python -m seer_env.sdk.scaffold new-cpp pkg.module:Class DEST``: scaffold a C++ port."""
    parser = argparse.ArgumentParser(prog="python -m seer_env.sdk.scaffold")
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser(
        "new-cpp", help="write the C++ project of a PythonModel prototype (docs/custom-models.md)"
    )
    new.add_argument("prototype", help="the prototype class, as pkg.module:Class")
    new.add_argument("dest", help="a new folder for the project")
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            files = new_cpp_project(args.prototype, args.dest)
    except (ValueError, ImportError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    for path in files:
        print(f"wrote {path}")
    print(
        f"next: pip install --no-build-isolation {args.dest}, then port the hooks marked PORT "
        "until seer_env.testing.verify(NAME, Prototype) passes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
