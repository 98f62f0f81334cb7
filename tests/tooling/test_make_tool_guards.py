"""Make targets whose tool the README's install does not bring say which extra does.

``make lint`` needs ruff (the ``dev`` extra) and ``make wheel`` auditwheel (``release``);
without them each stops with that sentence and exit 2, not ``ruff: not found``.
"""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "target,tool,extra", [("lint", "ruff", "dev"), ("wheel", "auditwheel", "release")]
)
def test_a_target_without_its_tool_names_the_extra(tmp_path, target, tool, extra):
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    # A PATH with make and the shell's tools but not the target's tool.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sh", "make", "rm", "ls", "echo"):
        found = shutil.which(name)
        if found:
            (bin_dir / name).symlink_to(found)
    env = {**os.environ, "PATH": str(bin_dir)}
    out = subprocess.run(
        [make, "-s", target], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode != 0
    assert f"make {target} needs {tool}: pip install -e '.[{extra}]'" in out.stdout + out.stderr
