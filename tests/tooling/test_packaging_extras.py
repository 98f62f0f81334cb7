"""Packaging rules the integrations depend on (pyproject.toml)."""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


@pytest.fixture(scope="module")
def project():
    return tomllib.loads(PYPROJECT.read_text())["project"]


def requirement(reqs, name):
    return [r for r in reqs if re.match(rf"{re.escape(name)}(\[.*\])?\s*([<>=!~ ;]|$)", r)]


def test_gymnasium_is_not_pinned(project):
    """RLlib pins an older gymnasium: ours must accept it (>= 1.0, no upper bound)."""
    (gym,) = requirement(project["dependencies"], "gymnasium")
    assert gym.replace(" ", "") == "gymnasium>=1.0"


def test_integration_extras_exist_and_torch_is_always_the_cpu_pin(project):
    extras = project["optional-dependencies"]
    for name in ("supersuit", "rllib", "torchrl", "torch", "integrations"):
        assert name in extras
    for name, reqs in extras.items():
        for req in requirement(reqs, "torch"):
            # a looser torch requirement would let pip pick a multi-GB CUDA build
            assert req.replace(" ", "") == "torch==2.13.0", (name, req)
    # extras whose packages import torch carry the pin themselves
    for name in ("rllib", "torchrl", "integrations", "torch"):
        assert requirement(extras[name], "torch"), name
