"""The version is written once, in pyproject.toml; the package and its metadata repeat it."""

import importlib.metadata
import re
from pathlib import Path

import seer_env
from seer_env import _version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def pyproject_version():
    return re.search(r'^version = "([^"]+)"', PYPROJECT.read_text(), re.M).group(1)


def test_the_package_version_is_the_installed_metadata_and_pyproject():
    assert seer_env.__version__ == importlib.metadata.version("seer_env") == pyproject_version()


def test_a_source_tree_without_an_install_reads_pyproject():
    assert _version._source_tree_version() == pyproject_version()


def test_no_package_file_writes_the_version_itself():
    version = pyproject_version()
    package = PYPROJECT.parent / "seer_env"
    assert [p for p in package.rglob("*.py") if version in p.read_text()] == []
