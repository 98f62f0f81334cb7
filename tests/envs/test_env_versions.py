"""Env versions: one class per workload, each version a declaration name and its defaults."""

import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

import seer_env
import seer_env.envs
from seer_env import options
from seer_env.envs import aircraft_v0, aircraft_v1, pcs_v0, pcs_v1
from seer_env.envs.aircraft import AircraftEnv
from seer_env.envs.pcs import PcsEnv
from seer_env.envs.version import EnvVersion
from seer_env.workloads import model_defaults, workload_spec

VERSIONS = [pcs_v0, pcs_v1, aircraft_v0, aircraft_v1]


def test_env_names_are_the_version_modules():
    names = seer_env.env_names()
    assert {"aircraft_v0", "aircraft_v1", "pcs_v0", "pcs_v1"} <= set(names)
    assert {"pcs", "aircraft", "version"}.isdisjoint(names)  # the classes, the machinery
    assert names == sorted(names)


@pytest.mark.parametrize("module", VERSIONS, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_a_version_takes_the_declared_parameters_then_the_runtime_options(module):
    version = module.VERSION
    names = list(inspect.signature(module.parallel_env).parameters)
    declared = list(model_defaults(workload_spec(version.declaration)))
    assert names == declared + list(options.option_names())
    for fn in (module.parallel_env, module.raw_env, module.env):
        assert inspect.signature(fn) == version.signature
        assert fn.__module__ == module.__name__


def _flat(text: str) -> str:
    return " ".join(text.split())  # the generated lines wrap anywhere


@pytest.mark.parametrize("module", VERSIONS, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_a_versions_page_lists_every_argument_with_its_default_and_is_never_stored(module):
    version = module.VERSION
    short = module.__name__.rsplit(".", 1)[1]
    head, rest = module.__doc__.split("\n## Arguments\n", 1)
    arguments, history = (_flat(part) for part in rest.split("\n## Version history\n", 1))
    assert head.startswith(f"{short}: ")  # the module's own text comes first
    assert arguments.startswith(f"``{short}.parallel_env(")
    declared = {p["name"]: p for p in version.spec["params"]}
    for name, parameter in version.signature.parameters.items():
        computed = name in declared and declared[name]["default"] is None  # arena_size
        default = declared[name]["default_doc"] if computed else repr(parameter.default)
        item = arguments.split(f"- ``{name}``: ", 1)[1].split(" - ``", 1)[0]
        assert item.endswith(f"default ``{default}``."), (name, item)
    assert history == " ".join(f"- {n.rsplit('_', 1)[1]}: {c}" for n, c in version.history)
    workload = short.rsplit("_", 1)[0]  # newest first, this workload's versions up to this one
    expected = [n for n in seer_env.env_names() if n.rsplit("_", 1)[0] == workload]
    assert [n for n, _ in version.history] == expected[: expected.index(short) + 1][::-1]
    # Generated at import, never stored: the source holds none of it.
    source = inspect.getsource(module)
    assert "## Arguments" not in source and "default ``" not in source


def test_the_version_table_is_every_version_module():
    from seer_env.envs import VERSIONS as TABLE

    files = {p.stem for p in Path(seer_env.envs.__file__).parent.glob("*_v[0-9]*.py")}
    assert set(TABLE) == files == set(seer_env.env_names())
    for name, version in TABLE.items():
        assert importlib.import_module(f"seer_env.envs.{name}").VERSION is version


@pytest.mark.parametrize(
    ("module", "env_class"),
    [(pcs_v0, PcsEnv), (pcs_v1, PcsEnv), (aircraft_v0, AircraftEnv), (aircraft_v1, AircraftEnv)],
)
def test_every_version_builds_its_workloads_one_class(module, env_class):
    small = {"width": 2, "height": 2} if env_class is PcsEnv else {"num_uavs": 3}
    env = module.parallel_env(**small, executor="serial")
    assert type(env) is env_class
    assert env.metadata["name"] == module.VERSION.name
    assert env.max_cycles == module.VERSION.signature.parameters["max_cycles"].default
    aec = module.env(**small, executor="serial")
    assert aec.unwrapped.metadata["name"] == module.VERSION.name


def test_a_version_that_changes_one_default_is_one_entry():
    v2 = EnvVersion("pcs_v2", PcsEnv, declaration="pcs_v1", defaults={"handoff_weight": 20.0})
    parallel_env, _, _ = v2.functions("seer_env.envs.pcs_v2")
    assert inspect.signature(parallel_env).parameters["handoff_weight"].default == 20.0
    assert "- ``handoff_weight``: " in v2.arguments_text()
    assert "default ``20.0``." in v2.arguments_text().split("``handoff_weight``")[1]
    env = parallel_env(width=2, height=2, executor="serial")
    assert env._model_config["handoff_weight"] == 20.0
    assert env.metadata["name"] == "pcs_v2"
    # Everything else is pcs_v1's.
    base = pcs_v1.parallel_env(width=2, height=2, executor="serial")
    assert {k: v for k, v in env._model_config.items() if k != "handoff_weight"} == {
        k: v for k, v in base._model_config.items() if k != "handoff_weight"
    }
    assert workload_spec("pcs_v1")["params"] != v2.spec["params"]  # a copy was changed


def test_a_version_refuses_defaults_it_cannot_honour():
    with pytest.raises(ValueError, match=r"neither a parameter of 'pcs' nor a runtime option"):
        EnvVersion("pcs_x", PcsEnv, declaration="pcs", defaults={"widht": 3})
    with pytest.raises(ValueError, match="channels"):
        EnvVersion("pcs_x", PcsEnv, declaration="pcs", defaults={"channels": 0})


def test_a_call_with_an_unknown_argument_is_a_type_error():
    with pytest.raises(TypeError, match="check_step"):
        pcs_v0.parallel_env(width=2, height=2, check_step=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        seer_env.SeerParallelEnv("pcs", {"width": 2, "height": 2}, nope=1)


def test_runtime_options_are_declared_once():
    names = options.option_names()
    assert len(set(names)) == len(names)
    resolved = options.resolve_options({"num_threads": 2}, max_cycles=7)
    assert list(resolved) == list(names)
    assert resolved["num_threads"] == 2 and resolved["max_cycles"] == 7
    assert resolved["check_steps"] == options.DEFAULT_CHECK_STEPS
    doc = options.options_doc(max_cycles=7)
    assert all(f"- ``{n}``: " in doc for n in names)
    assert "default ``7``." in doc


def test_every_version_is_on_its_workloads_docs_page():
    docs = Path(__file__).resolve().parents[2] / "docs" / "workloads"
    for name in seer_env.env_names():
        module = importlib.import_module(f"seer_env.envs.{name}")
        workload = module.VERSION.env_class.__module__.rsplit(".", 1)[1]  # pcs, aircraft
        page = (docs / f"{workload}.md").read_text()
        assert f"::: seer_env.envs.{workload}\n" in page
        assert f"## {name}\n\n::: seer_env.envs.{name}\n" in page, f"{name} not on {page}"


def test_the_docs_build_documents_a_version_with_its_generated_arguments():
    griffe = pytest.importorskip("griffe")
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "griffe_generated_docstrings", root / "tools" / "griffe_generated_docstrings.py"
    )
    extension = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extension)
    static = griffe.load("seer_env.envs.pcs_v1")
    assert "## Arguments" not in static.docstring.value  # the source stores none of it
    built = griffe.load(
        "seer_env.envs.pcs_v1",
        extensions=griffe.load_extensions(extension.GeneratedDocstrings()),
    )
    assert built.docstring.value == inspect.cleandoc(pcs_v1.__doc__)  # what the docs render
