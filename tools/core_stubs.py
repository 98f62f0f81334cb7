"""Write seer_env/_core.pyi, the type stub of the built extension (``make stubs``).

Usage: ``python tools/core_stubs.py [OUTPUT_DIR]`` writes ``OUTPUT_DIR/seer_env/_core.pyi``
(default: the repository root, i.e. the checked-in stub). The output depends
only on the built module: pybind11-stubgen writes members in definition order,
and nothing here adds a path, a date or a version. tests/tooling/test_core_stubs.py
fails when the checked-in stub differs from what the built module gives.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pybind11_stubgen import main as stubgen

import seer_env
from seer_env import _core

ROOT = Path(__file__).resolve().parent.parent
EXCEPTIONS = ("ContractViolation", "EventBudgetExceeded", "HandlerError")


def write(output_dir: Path) -> Path:
    """Generate the stub under ``output_dir`` and return its path."""
    # seer_env/__init__.py moves the exceptions' __module__ to "seer_env" (their
    # public home); put them back so that the stub defines them instead of
    # importing them from the package that imports them from _core.
    for name in EXCEPTIONS:
        getattr(_core, name).__module__ = "seer_env._core"
    try:
        stubgen(["seer_env._core", "--exit-code", "-o", str(output_dir)])
    finally:
        for name in EXCEPTIONS:
            getattr(seer_env, name).__module__ = "seer_env"
    return output_dir / "seer_env" / "_core.pyi"


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    print(write(out))
