"""The sdist holds what a build needs; the wheel built from it holds seer_env/ and no more.

The wheel is built from the sdist alone, extracted into an empty folder (what pip does
with an sdist from PyPI). That compiles the extension (minutes: marked slow), unless
SEER_DIST_DIR names a folder where `python -m build` already left one sdist and the
wheel it built from it (.ci/run's wheel step).
"""

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("build")

ROOT = Path(__file__).resolve().parents[2]
# What users import, besides the package's own files: the files CMake installs into it.
INSTALLED = ("seer_env/include/", "seer_env/sdk_src/")
NEVER_SHIPPED = ("tests/", "bench/", "training/", "build/", "examples/", "docs/", "cpp/")


def project_version():
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


def built(pattern):
    folder = os.environ.get("SEER_DIST_DIR")
    if not folder:
        return None
    (found,) = Path(folder).glob(pattern)  # one, or the CI step is broken
    return found


def run_build(args, out, cwd):
    env = dict(
        os.environ, CMAKE_BUILD_PARALLEL_LEVEL=os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    )
    cmd = [sys.executable, "-m", "build", "--no-isolation", *args, "-o", str(out), str(cwd)]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    found = built("*.tar.gz")
    if found is not None:
        return found
    out = tmp_path_factory.mktemp("sdist")
    run_build(["--sdist"], out, ROOT)
    (found,) = out.glob("*.tar.gz")
    return found


@pytest.fixture(scope="module")
def sdist_names(sdist):
    with tarfile.open(sdist) as tar:
        top = f"seer_env-{project_version()}/"
        names = tar.getnames()
    assert all(n == top.rstrip("/") or n.startswith(top) for n in names), names[:5]
    return {n[len(top) :] for n in names if n.startswith(top)}


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory):
    found = built("*.whl")
    if found is not None:
        return found
    clean = tmp_path_factory.mktemp("from_sdist")
    with tarfile.open(sdist) as tar:
        # "data": no links out, no absolute paths (the filter exists from 3.12, and in
        # 3.10.12+ and 3.11.4+ as a security backport; the default warns from 3.14).
        if hasattr(tarfile, "data_filter"):
            tar.extractall(clean, filter="data")
        else:
            tar.extractall(clean)
    (source,) = clean.iterdir()
    out = tmp_path_factory.mktemp("wheel")
    run_build(["--wheel"], out, source)
    (found,) = out.glob("*.whl")
    return found


@pytest.fixture(scope="module")
def wheel_names(wheel):
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def source_files(*paths):
    """The checkout's files under `paths` that a build sees (tracked or new, not ignored)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "--", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {p for p in listed if (ROOT / p).is_file()}


def test_the_sdist_holds_every_file_a_build_reads(sdist_names):
    needed = source_files("cpp", "seer_env", "CMakeLists.txt", "pyproject.toml", "README.md")
    assert needed - sdist_names == set()
    assert {"PKG-INFO", "CHANGELOG.md", "pyproject.toml", "CMakeLists.txt"} <= sdist_names


def test_the_sdist_holds_no_build_output(sdist_names):
    bad = [n for n in sdist_names if n.startswith(("build/", "dist/")) or "__pycache__" in n]
    bad += [n for n in sdist_names if n.endswith((".so", ".pyc", ".o", ".a"))]
    bad += [n for n in sdist_names if n.startswith("docs/img/")]  # figures stay in the repo
    assert bad == []


@pytest.mark.slow
def test_the_wheel_holds_the_package_and_nothing_of_the_build(wheel_names):
    dist_info = f"seer_env-{project_version()}.dist-info/"
    stray = [n for n in wheel_names if not n.startswith(("seer_env/", dist_info))]
    assert stray == []
    assert [n for n in wheel_names if n.startswith(NEVER_SHIPPED)] == []
    assert [n for n in wheel_names if "__pycache__" in n or n.endswith(".pyc")] == []
    core = [n for n in wheel_names if re.fullmatch(r"seer_env/_core\..*\.so", n)]
    assert len(core) == 1, core
    package = {n for n in wheel_names if n.startswith("seer_env/")}
    own = package - set(core) - {n for n in package if n.startswith(INSTALLED)}
    assert own == source_files("seer_env")  # every file of seer_env/, templates included
    assert {n[len("seer_env/") :] for n in package if n.startswith("seer_env/include/")} == {
        f"include/seer/{p.name}" for p in (ROOT / "cpp/include/seer").iterdir()
    }
    assert {n for n in package if n.startswith("seer_env/sdk_src/")} == {
        f"seer_env/sdk_src/{f}" for f in ("config.cpp", "context.cpp", "workload.cpp")
    }
    for required in ("sdk/templates/model.cpp.in", "cmake/seer_envConfig.cmake", "py.typed"):
        assert f"seer_env/{required}" in package


@pytest.mark.slow
def test_the_wheel_metadata_says_what_ci_tests(wheel):
    with zipfile.ZipFile(wheel) as z:
        name = f"seer_env-{project_version()}.dist-info/METADATA"
        meta = email.parser.Parser().parsestr(z.read(name).decode())
    assert meta["Version"] == project_version()
    assert meta["Requires-Python"] == ">=3.10"
    tested = {c for c in meta.get_all("Classifier") if re.fullmatch(r".*Python :: 3\.\d+", c)}
    assert tested == {f"Programming Language :: Python :: 3.{m}" for m in (10, 11, 12, 13)}
