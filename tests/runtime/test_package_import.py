import importlib
import subprocess
import sys

import seer_env


def test_version_and_extension_import():
    assert isinstance(seer_env.__version__, str) and seer_env.__version__
    core = importlib.import_module("seer_env._core")
    assert hasattr(core, "Simulation")
    assert set(seer_env.__all__) <= set(dir(seer_env))


def test_builtin_models_and_executors_are_listed():
    assert {"phold", "faulty"} <= set(seer_env.model_names())
    assert "serial" in seer_env.executor_names()


def test_test_models_and_comparison_executors_are_listed_only_once_registered():
    # A fresh process: tests/conftest.py registered both in this one.
    script = (
        "import seer_env\n"
        "print('faulty' in seer_env.model_names())\n"
        "print(','.join(seer_env.executor_names()))\n"
        "seer_env._core._register_test_models()\n"
        "seer_env._core._register_comparison_executors()\n"
        "print('faulty' in seer_env.model_names())\n"
        "print(','.join(seer_env.executor_names()))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "False",
        "serial,parallel",
        "True",
        "serial,parallel,locked,barrier",
    ]


def test_exceptions_are_runtime_errors_with_public_names():
    for exc in (seer_env.ContractViolation, seer_env.HandlerError, seer_env.EventBudgetExceeded):
        assert issubclass(exc, RuntimeError)
        assert exc.__module__ == "seer_env"
