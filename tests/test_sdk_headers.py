"""The model SDK installs only the headers a model author needs, and they suffice.

An editable install compiles plugins against the whole of cpp/include, so a
missing SDK header would only show up in a wheel. This checks the installed
set (SEER_SDK_HEADERS in CMakeLists.txt) statically: it is closed under
#include, and covers every runtime header the SDK sources, the example
project and the test plugins include.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "cpp" / "include"
_SEER_INCLUDE = re.compile(r'^\s*#\s*include\s+"(seer/[^"]+)"', re.MULTILINE)


def _sdk_headers() -> set[str]:
    cmake = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"set\(SEER_SDK_HEADERS ([^)]*)\)", cmake)
    assert match, "CMakeLists.txt must list SEER_SDK_HEADERS"
    return {f"seer/{name}.hpp" for name in match.group(1).split()}


def _seer_includes(path: Path) -> set[str]:
    return set(_SEER_INCLUDE.findall(path.read_text()))


def test_sdk_headers_exist_and_are_closed_under_include():
    sdk = _sdk_headers()
    for header in sorted(sdk):
        path = INCLUDE / header
        assert path.is_file(), f"SDK header {header} does not exist"
        outside = _seer_includes(path) - sdk
        assert not outside, f"{header} includes {sorted(outside)}, which the SDK does not install"


def test_sdk_covers_what_plugins_include():
    sdk = _sdk_headers()
    users = [ROOT / "cpp" / "src" / "context.cpp", ROOT / "cpp" / "src" / "config.cpp"]
    for folder in (ROOT / "examples" / "custom_model_cpp", ROOT / "tests" / "plugins"):
        users += sorted(folder.rglob("*.cpp")) + sorted(folder.rglob("*.hpp"))
    assert len(users) > 3
    for path in users:
        outside = _seer_includes(path) - sdk
        assert not outside, f"{path.relative_to(ROOT)} includes {sorted(outside)}: not in the SDK"


def test_runtime_internals_stay_out_of_the_sdk():
    sdk = _sdk_headers()
    for internal in ("executor", "parallel_executor", "local_queue", "thread_pool", "simulation"):
        assert f"seer/{internal}.hpp" not in sdk
