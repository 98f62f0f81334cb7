"""The package version: pyproject.toml's `[project] version`, the one place it is written.

An installed package (a wheel, an editable install) answers from its metadata. A source
tree imported without an install (a sanitizer run's copied package, a plain `sys.path`
entry) reads the checkout's pyproject.toml instead.
"""

import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def _source_tree_version() -> str:
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return "0.0.0+unknown"
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    found = project and re.search(r'^version\s*=\s*"([^"]+)"', project.group(1), re.M)
    return found.group(1) if found else "0.0.0+unknown"


try:
    __version__ = version("seer_env")
except PackageNotFoundError:
    __version__ = _source_tree_version()
