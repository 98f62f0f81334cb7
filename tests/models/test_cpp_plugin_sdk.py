"""The C++ model SDK: headers and CMake config ship, plugins register and run."""

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test
from plugin_build import cmake_build_broken, pip_install_example

import seer_env
from seer_env import vector
from seer_env.testing import assert_models_equivalent, assert_serial_equivalent, check_contract


def test_sdk_files_are_found():
    include = Path(seer_env.get_include())
    for header in ("model.hpp", "context.hpp", "plugin.hpp", "python_plugin.hpp"):
        assert (include / "seer" / header).is_file()
    assert (Path(seer_env.get_cmake_dir()) / "seer_envConfig.cmake").is_file()


def test_register_rejects_what_is_not_a_plugin():
    with pytest.raises(ValueError, match="PyCapsule named 'seer_env.ModelPlugin'"):
        seer_env.register_cpp_model("x", object())
    with pytest.raises(ValueError, match="has no model_plugin"):
        seer_env.register_cpp_model("x", np)
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        seer_env.register_cpp_model("", object())


class _Abi(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("cxx11_abi", ctypes.c_int32)] + [
        (f"size{i}", ctypes.c_uint32) for i in range(6)
    ]


class _Plugin(ctypes.Structure):
    _fields_ = [("abi", _Abi), ("compiler", ctypes.c_char_p), ("make", ctypes.c_void_p)]


def test_register_refuses_a_plugin_built_with_another_abi():
    plugin = _Plugin(_Abi(999, 1, 96, 1, 1, 1, 32, 24), b"imaginary-cc 1.0", None)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = new_capsule(ctypes.addressof(plugin), b"seer_env.ModelPlugin", None)
    with pytest.raises(
        ValueError, match="incompatible C\\+\\+ ABI: plugin \\(abi v999.*imaginary-cc"
    ):
        seer_env.register_cpp_model("wrong_abi", capsule)
    assert "wrong_abi" not in seer_env.model_names()


# -- the example project, pip-installed from a fresh copy -----------------------------------------
@pytest.fixture(scope="module")
def predprey(tmp_path_factory):
    site = pip_install_example(tmp_path_factory.mktemp("predprey"))
    sys.path.insert(0, str(site))
    try:
        import predprey

        yield predprey
    finally:
        sys.path.remove(str(site))


@pytest.mark.slow
def test_example_registers_and_passes_the_pettingzoo_tests(predprey):
    assert "predprey" in seer_env.model_names()
    parallel_api_test(predprey.parallel_env(seed=0), num_cycles=50)
    parallel_seed_test(lambda: predprey.parallel_env())
    parallel_api_test(predprey.parallel_env(implementation="python", seed=0), num_cycles=20)


@pytest.mark.slow
def test_example_is_serial_equivalent(predprey):
    assert_serial_equivalent(
        lambda **kw: predprey.parallel_env(width=10, height=8, predators=6, prey=30, **kw),
        seeds=(0, 1),
        steps=25,
        threads=(1, 2, 3),
    )


@pytest.mark.slow
def test_example_has_catches_so_equivalence_means_something(predprey):
    env = predprey.parallel_env(seed=3)
    env.reset()
    for _ in range(60):
        env.step({a: env.action_space(a).sample() for a in env.agents})
    assert env.sim.totals()["prey_caught"] > 0
    assert env.sim.last_step["cross_events"] >= 0


@pytest.mark.slow
def test_example_python_prototype_equals_cpp_port(predprey):
    for config in ({}, {"width": 5, "height": 4, "predators": 3, "prey": 12, "view_radius": 1}):
        assert_models_equivalent(
            lambda c=config: predprey.parallel_env(implementation="python", **c),
            lambda c=config: predprey.parallel_env(**c),
            seeds=(0, 7),
            steps=40,
        )


@pytest.mark.slow
def test_example_obeys_the_contract(predprey):
    check_contract(lambda **kw: predprey.parallel_env(**kw), seeds=(0, 1))
    check_contract(lambda **kw: predprey.parallel_env(implementation="python", **kw))


@pytest.mark.slow
def test_a_porting_bug_is_caught_with_its_location(predprey):
    class Buggy(predprey.PredPreyPrototype):
        def reward(self, agent, state, snapshot):  # forgot the step cost
            return float(state["caught_step"])

    expected = r"model b differs from model a \(seed 0\) at step 1: \['rewards'\]\['predator_0'\]"
    with pytest.raises(AssertionError, match=expected + r": -0.01 .* != 0.0"):
        assert_models_equivalent(
            lambda: predprey.parallel_env(),
            lambda: seer_env.SeerParallelEnv(Buggy, {}),
        )


@pytest.mark.slow
def test_example_config_errors_cross_the_plugin_boundary(predprey):
    with pytest.raises(ValueError, match="width"):
        predprey.parallel_env(width=0)
    with pytest.raises(ValueError, match="unknown|bogus"):
        seer_env.SeerParallelEnv("predprey", {"bogus": 1.0})


# -- a deliberately broken plugin, built with plain CMake -----------------------------------------
@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    build = cmake_build_broken(tmp_path_factory.mktemp("broken"))
    sys.path.insert(0, str(build))
    try:
        import _broken_ring

        seer_env.register_cpp_model("broken_ring", _broken_ring)
        yield (
            lambda mode: lambda **kw: seer_env.SeerParallelEnv("broken_ring", {"mode": mode}, **kw)
        )
    finally:
        sys.path.remove(str(build))


@pytest.mark.slow
def test_correct_ring_passes_the_kit(broken):
    assert_serial_equivalent(broken(0), steps=10)
    assert check_contract(broken(0)).ok


@pytest.mark.slow
def test_contract_violation_in_a_plugin_is_a_contract_violation(broken):
    env = broken(1)()
    env.reset(seed=0)
    with pytest.raises(seer_env.ContractViolation, match="before now \\+ lookahead") as info:
        env.step({a: 1 for a in env.agents})
    assert (info.value.entity, info.value.kind, info.value.target) == (0, "action", 1)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "rule", "message"),
    [
        (1, "event-locality", "cross-entity event scheduled before now \\+ lookahead"),
        (2, "event-locality", "entity 0 handling 'TICK' .* wrote the state of entity 1"),
        (
            4,
            "determinism",
            "a second run with the same seed differs at step 1: \\['observations'\\]",
        ),
        (5, "handler", "entity 0 handling 'TICK' at t=2.2.*deliberate bug"),
    ],
)
def test_check_contract_reports_each_breach(broken, mode, rule, message):
    report = check_contract(broken(mode), strict=False)
    assert [v.rule for v in report.violations] == [rule]
    assert report.violations[0].seed == 0 and not report.ok
    with pytest.raises(AssertionError, match=message):
        check_contract(broken(mode))


@pytest.mark.slow
def test_serial_equivalence_catches_a_read_of_live_state(broken):
    # Reading another entity's live state passes every runtime check...
    assert check_contract(broken(3)).ok
    # ...but executors then disagree with serial, and the kit says where.
    # (parallel with 1 thread runs the serial loop: the first to differ has 2)
    expected = r"executor 'parallel' with 2 threads differs from serial \(seed 0\) at step \d+: "
    with pytest.raises(AssertionError, match=expected + r"\['observations'\]\['agent_\d'\]\[1\]"):
        assert_serial_equivalent(broken(3))


@pytest.mark.slow
def test_a_plugin_model_runs_in_the_vector_env_like_its_own_env(predprey):
    # Registered C++ models are indistinguishable from the built-ins: vector.make takes them.
    vec = vector.make("predprey", 3, seed=0, width=10, height=8, executor="parallel", num_threads=2)
    vec.reset(seed=5)
    vec.action_space.seed(0)
    actions = [vec.action_space.sample() for _ in range(4)]
    for act in actions:
        vec.step(act)
    alone = seer_env.SeerParallelEnv("predprey", {"width": 10, "height": 8})
    alone.reset(seed=6)  # instance 1 of the vector env: seed 5 + 1
    rows = slice(vec.agents_per_instance, 2 * vec.agents_per_instance)
    for act in actions:
        alone.step(
            {a: act[rows][i] for i, a in enumerate(alone.possible_agents) if a in alone.agents}
        )
    assert vec.sim.digest(1) == alone.sim.digest()
