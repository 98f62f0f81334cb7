"""Build model plugins for tests: the example with pip, the broken ring with CMake."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import seer_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "custom_model_cpp"
BROKEN = Path(__file__).resolve().parent / "plugins" / "broken"
PLANTED = Path(__file__).resolve().parent / "plugins" / "planted"


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


def pip_install_example(target: Path) -> Path:
    """``pip install`` examples/custom_model_cpp into ``target``; returns the sys.path entry."""
    source = target / "src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "__pycache__"))
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    _run([*pip, "--target", str(target / "site"), str(source)])
    return target / "site"


def cmake_build_broken(target: Path) -> Path:
    """Build tests/support/plugins/broken with plain CMake; returns the module's folder."""
    return cmake_build(BROKEN, target)


def cmake_build(source: Path, target: Path) -> Path:
    """Build a plugin folder with plain CMake; returns the folder holding the module."""
    build = target / "build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", str(source), "-B", str(build), *generator]
    configure += ["-DCMAKE_BUILD_TYPE=Release", f"-DPython_EXECUTABLE={sys.executable}"]
    configure += [f"-Dseer_env_DIR={seer_env.get_cmake_dir()}"]
    _run(configure)
    _run(["cmake", "--build", str(build)])
    return build
