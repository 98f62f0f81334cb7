"""Write the C++ project of a ``PythonModel`` prototype (``python -m seer_env.scaffold new-cpp``).

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
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import keyword
import math
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from seer_env.python_model import PythonModel

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


def load_prototype(target: str) -> type[PythonModel]:
    """``"pkg.module:Class"`` -> the ``PythonModel`` subclass (ValueError otherwise)."""
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"prototype must be 'pkg.module:Class', got {target!r}")
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name, None)
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
    stubs = {
        "reset": "  void reset_states() override { allocate(spec_.num_entities); }",
        "on_init": "  void on_init(seer::Context& ctx) override { (void)ctx; }",
        "on_step_begin": "  void on_step_begin(seer::Context& ctx) override { (void)ctx; }",
        "on_action": (
            "  void on_action(seer::Context& ctx, const seer::ActionView& action) override {\n"
            "    (void)ctx;\n    (void)action;\n  }"
        ),
        "on_event": (
            "  void on_event(seer::Context& ctx, const seer::Event& event) override {\n"
            "    (void)ctx;\n    (void)event;\n  }"
        ),
        "after_snapshot": "  void after_snapshot() override {}",
        "terminated": (
            "  bool terminated(seer::EntityId agent) const override {\n"
            "    (void)agent;\n    return false;\n  }"
        ),
        "truncated": (
            "  bool truncated(seer::EntityId agent) const override {\n"
            "    (void)agent;\n    return false;\n  }"
        ),
        "info": (
            "  void info(seer::EntityId agent, std::int64_t* out) const override {\n"
            "    (void)agent;\n    for (std::size_t i = 0; i < spec_.info_keys.size(); ++i) "
            "out[i] = 0;\n  }"
        ),
        "global_state": (
            "  void state(float* out) const override {\n"
            "    for (std::size_t i = 0; i < spec_.state_dim; ++i) "
            "out[i] = inside(spec_.state_low, spec_.state_high);\n  }"
        ),
        "totals": (
            "  void totals(std::int64_t* out) const override {\n"
            "    for (std::size_t i = 0; i < spec_.total_keys.size(); ++i) out[i] = 0;\n  }"
        ),
    }
    # observe and reward are required by Model: always written.
    required = {
        "observe": (
            "  void observe(seer::EntityId agent, float* obs) const override {\n"
            "    (void)agent;\n    for (std::size_t i = 0; i < spec_.obs_dim; ++i) "
            "obs[i] = inside(spec_.obs_low[i], spec_.obs_high[i]);\n  }"
        ),
        "reward": (
            "  double reward(seer::EntityId agent) const override {\n"
            "    (void)agent;\n    return 0.0;\n  }"
        ),
        "on_action": stubs["on_action"],
        "on_event": stubs["on_event"],
        "on_init": stubs["on_init"],
    }
    out = []
    for hook in _HOOKS:
        if not (_defines(cls, hook) or hook in required):
            continue
        if _defines(cls, hook):
            out += _source_comment(cls, hook)
        out.append(required.get(hook, stubs.get(hook)))
        out.append("")
    return out


def _cpp_source(cls: type[PythonModel], name: str) -> str:
    spec = cls.workload_spec()
    layout = cls.from_config({})._runtime_layout()
    model_spec, state, public = layout["spec"], layout["state_dtype"], layout["public_dtype"]
    payload = layout["payload_dtype"]
    klass = "".join(part.title() for part in name.split("_"))
    act = model_spec["action"]
    lines = [
        f"// {name}: the C++ port of {cls.__module__}.{cls.__qualname__}.",
        "// Written by `python -m seer_env.scaffold new-cpp`: the records, declaration and",
        "// config readers are done; each hook marked PORT is a no-op that keeps the",
        "// contract, above it the prototype's code to port. Check the port with",
        "//   seer_env.testing.verify(NAME, Prototype)",
        "#include <cmath>",
        "#include <cstddef>",
        "#include <cstdint>",
        "#include <cstring>",
        "#include <limits>",
        "#include <memory>",
        "#include <vector>",
        "",
        '#include "seer/model.hpp"',
        '#include "seer/python_plugin.hpp"',
        '#include "seer/workload.hpp"',
        "",
        "namespace {",
        "",
        "constexpr float kInf = std::numeric_limits<float>::infinity();",
        "",
        "// The records, field for field the prototype's dtypes (the digest hashes",
        "// every byte: no padding).",
        *_struct("State", state),
        "",
        *_struct("Public", public),
        "",
    ]
    if payload is not None:
        lines += [*_struct("Payload", payload), ""]
    for i, kind in enumerate(spec["event_kinds"]):
        lines.append(f"constexpr seer::EventKind k{_camel(kind)} = {i};  // {kind}")
    if spec["event_kinds"]:
        lines.append("")
    params = ",\n              ".join(_param_row(p) for p in spec["params"])
    lines += [
        "// The declaration: parameters, keys and records, the one table the",
        "// registry, the Python env signature and the docs read.",
        f"seer::WorkloadDecl {name}_workload() {{",
        "  seer::WorkloadDecl w;",
        f"  w.name = {_cpp_string(name)};",
        f"  w.summary = {_cpp_string(spec['summary'])};",
        f"  w.params = {{{params}}};" if spec["params"] else "  w.params = {};",
        "  w.info_keys = {" + ", ".join(map(_cpp_string, spec["info_keys"])) + "};",
        "  w.total_keys = {" + ", ".join(map(_cpp_string, spec["total_keys"])) + "};",
        "  w.event_kinds = {" + ", ".join(map(_cpp_string, spec["event_kinds"])) + "};",
        _record("state", "State", state),
        _record("public", "Public", public),
    ]
    if payload is not None:
        lines.append(_record("payload", "Payload", payload))
    lines += ["  return w;", "}", ""]
    lines += [
        f"class {klass} final : public seer::ModelBase<{klass}, State, Public> {{",
        " public:",
        f"  explicit {klass}(seer::Config& config) {{",
        f"    static const seer::WorkloadDecl decl = {name}_workload();",
        "    seer::Params params(decl, config);",
    ]
    for p in spec["params"]:
        read = "integer" if p["type"] == "int" else "real"
        lines.append(f'    {p["name"]}_ = params.{read}("{p["name"]}");')
    lines += [
        "    // PORT: the sizes, timing and spaces below are the prototype's with its",
        "    // default config; compute them from the parameters as its __init__ does.",
        f"    spec_.name = {_cpp_string(name)};",
        f"    spec_.agent_prefix = {_cpp_string(model_spec['agent_prefix'])};",
        f"    spec_.num_entities = {model_spec['num_entities']};",
        f"    spec_.num_agents = {model_spec['num_agents']};",
        f"    spec_.lookahead = {model_spec['lookahead']!r};",
        f"    spec_.dt = {model_spec['dt']!r};",
        f"    spec_.obs_dim = {model_spec['obs_dim']};",
    ]
    if model_spec["obs_dim"]:
        lines.append(f"    spec_.obs_low.{_floats(model_spec['obs_low'])};")
        lines.append(f"    spec_.obs_high.{_floats(model_spec['obs_high'])};")
    lines.append(
        "    spec_.action = seer::ActionSpec{"
        f"{'true' if act['discrete'] else 'false'}, {act['n']}, {act['dim']}, "
        f"{_float(act['low'])}, {_float(act['high'])}}};"
    )
    if model_spec["state_dim"]:
        lines += [
            f"    spec_.state_dim = {model_spec['state_dim']};",
            f"    spec_.state_low = {_float(model_spec['state_low'])};",
            f"    spec_.state_high = {_float(model_spec['state_high'])};",
        ]
    lines += [
        "    spec_.info_keys = decl.info_keys;",
        "    spec_.total_keys = decl.total_keys;",
        "    spec_.event_kinds = decl.event_kinds;",
        "    allocate(spec_.num_entities);",
        "  }",
        "",
        "  static Public make_public(const State& s) {",
        "    Public p{};",
        *[f"    copy(p.{f}, s.{f});" for f in public.names],
        "    return p;",
        "  }",
        "",
        *_hook_stubs(cls),
        " private:",
        "  template <class T>",
        "  static void copy(T& to, const T& from) { std::memcpy(&to, &from, sizeof(T)); }",
        "  // A value inside [low, high]: what the stubs return until ported.",
        "  static float inside(float low, float high) {",
        "    if (std::isfinite(low)) return low;",
        "    return std::isfinite(high) && high < 0.0f ? high : 0.0f;",
        "  }",
        "",
        "  // The parameters, as declared.",
        *[
            f"  {'std::int64_t' if p['type'] == 'int' else 'double'} {p['name']}_ = 0;"
            for p in spec["params"]
        ],
        "};",
        "",
        f"std::unique_ptr<seer::Model> make_{name}(seer::Config& config) {{",
        f"  return std::make_unique<{klass}>(config);",
        "}",
        "",
        "}  // namespace",
        "",
        f"SEER_MODEL_MODULE(_{name}, make_{name}, {name}_workload)",
        "",
    ]
    return "\n".join(lines)


def _camel(text: str) -> str:
    return "".join(p.title() for p in re.split(r"\W+|_", text) if p) or "Kind"


def _cmake(name: str) -> str:
    return f"""\
cmake_minimum_required(VERSION 3.18)
project({name} LANGUAGES CXX)

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)

# seer_env's SDK, found through the Python that will import the module.
find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.Module)
execute_process(
  COMMAND "${{Python_EXECUTABLE}}" -c "import seer_env; print(seer_env.get_cmake_dir())"
  OUTPUT_VARIABLE seer_env_DIR OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
find_package(seer_env CONFIG REQUIRED)

seer_env_add_model(_{name} src/cpp/{name}.cpp)
install(TARGETS _{name} LIBRARY DESTINATION {name})
"""


def _pyproject(name: str, cls: type) -> str:
    return f"""\
[build-system]
# seer_env must be importable at build time (CMake asks it where its SDK is):
# build with `pip install --no-build-isolation .` in an env that has it.
requires = ["scikit-build-core>=0.10", "seer_env"]
build-backend = "scikit_build_core.build"

[project]
name = "{name}"
version = "0.1.0"
description = "The C++ port of {cls.__module__}.{cls.__qualname__} (a seer_env model)"
requires-python = ">=3.10"
dependencies = ["seer_env"]

[tool.scikit-build]
minimum-version = "build-system.requires"
build-dir = "build/{{wheel_tag}}"
wheel.packages = ["src/{name}"]
cmake.build-type = "Release"
"""


def _package_init(name: str, cls: type) -> str:
    return f'''\
"""{name}: the C++ port of {cls.__module__}.{cls.__qualname__}, registered on import.

``parallel_env(implementation="cpp")`` runs the compiled model (any executor and
thread count); ``implementation="python"`` the prototype (serial). Check the
port with ``seer_env.testing.verify(NAME, Prototype)``.
"""

from __future__ import annotations

import seer_env
from {cls.__module__} import {cls.__qualname__} as Prototype
from seer_env.workloads import workload_spec

from {name} import _{name}

__all__ = ["NAME", "Prototype", "parallel_env"]

NAME = "{name}"
seer_env.register_cpp_model(NAME, _{name})
_MODEL_KEYS = tuple(p["name"] for p in workload_spec(NAME)["params"])


def parallel_env(implementation: str = "cpp", **kwargs) -> seer_env.SeerParallelEnv:
    """The env of the port (``"cpp"``) or the prototype (``"python"``); model keys as declared."""
    if implementation not in ("cpp", "python"):
        raise ValueError(f"implementation must be 'cpp' or 'python', got {{implementation!r}}")
    config = {{k: kwargs.pop(k) for k in _MODEL_KEYS if k in kwargs}}
    model = NAME if implementation == "cpp" else Prototype
    return seer_env.SeerParallelEnv(model, config, **kwargs)
'''


def new_cpp_project(prototype: str | type[PythonModel], dest: str | Path) -> list[Path]:
    """Write the C++ project of ``prototype`` into ``dest``; returns the files written.

    Args:
        prototype: ``"pkg.module:Class"`` or the ``PythonModel`` subclass (it
            must be importable by that module path from the built package).
        dest: a folder that does not exist yet, or is empty.

    Raises:
        ValueError: ``dest`` holds files, or the prototype has a declaration the
            scaffold does not translate (the message names it).
    """
    cls = load_prototype(prototype) if isinstance(prototype, str) else prototype
    if not (isinstance(cls, type) and issubclass(cls, PythonModel)):
        raise ValueError(f"prototype must be a PythonModel subclass, got {prototype!r}")
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"dest must be a new or empty folder, got {str(dest)!r} (not empty)")
    name = _snake(cls.name or cls.__name__)
    files = {
        dest / "CMakeLists.txt": _cmake(name),
        dest / "pyproject.toml": _pyproject(name, cls),
        dest / "src" / "cpp" / f"{name}.cpp": _cpp_source(cls, name),
        dest / "src" / name / "__init__.py": _package_init(name, cls),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return list(files)


def main(argv: list[str] | None = None) -> int:
    """``python -m seer_env.scaffold new-cpp pkg.module:Prototype DEST``: scaffold a C++ port."""
    parser = argparse.ArgumentParser(prog="python -m seer_env.scaffold")
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser(
        "new-cpp", help="write the C++ project of a PythonModel prototype (docs/custom-models.md)"
    )
    new.add_argument("prototype", help="the prototype class, as pkg.module:Class")
    new.add_argument("dest", help="a new folder for the project")
    args = parser.parse_args(argv)
    try:
        files = new_cpp_project(args.prototype, args.dest)
    except (ValueError, ImportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in files:
        print(f"wrote {path}")
    print(
        f"next: pip install --no-build-isolation {args.dest}, then port the hooks marked PORT "
        "until seer_env.testing.verify(NAME, Prototype) passes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
