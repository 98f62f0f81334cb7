"""seer_env/_core.pyi is what pybind11-stubgen makes of the built extension (``make stubs``)."""

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pybind11_stubgen")

ROOT = Path(__file__).resolve().parents[2]


def test_checked_in_stub_matches_the_built_module(tmp_path):
    # A subprocess: the generator moves the exceptions' __module__ while it runs.
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "core_stubs.py"), str(tmp_path)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    built = (tmp_path / "seer_env" / "_core.pyi").read_text()
    checked_in = (ROOT / "seer_env" / "_core.pyi").read_text()
    diff = "".join(
        difflib.unified_diff(
            checked_in.splitlines(True), built.splitlines(True), "checked in", "built"
        )
    )
    assert not diff, f"seer_env/_core.pyi is stale: run `make stubs`\n{diff}"


def test_stub_declares_the_public_names():
    import seer_env._core as core

    stub = (ROOT / "seer_env" / "_core.pyi").read_text()
    for name in ("Simulation", "VectorSimulation", "ContractViolation", "model_names"):
        assert hasattr(core, name)
        assert f"class {name}" in stub or f"def {name}" in stub
