"""The model SDK is cpp/include/seer: every header there is installed, and they suffice.

CMakeLists.txt installs every file of cpp/include/seer (the headers a model
author includes) and the model-side sources a plugin compiles in; the
runtime's own headers live beside their sources in cpp/src and are never
installed. An editable install compiles plugins against cpp/include too, so
the editable and the wheel SDK are the same set. This checks statically that
the set is closed under #include and covers every runtime header the SDK
sources, the example project and the test plugins include.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "cpp" / "include"
SDK = INCLUDE / "seer"
RUNTIME = ROOT / "cpp" / "src"
SDK_SOURCES = ("context.cpp", "config.cpp", "workload.cpp")
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def _sdk_headers() -> set[str]:
    return {f"seer/{path.name}" for path in SDK.iterdir()}


def _includes(path: Path) -> set[str]:
    return set(_QUOTED_INCLUDE.findall(path.read_text()))


def test_cmake_installs_every_header_of_the_sdk_folder():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(
        r"file\(GLOB SEER_SDK_HEADERS CONFIGURE_DEPENDS \$\{CMAKE_CURRENT_SOURCE_DIR\}"
        r"/cpp/include/seer/\*\)",
        cmake,
    ), "CMakeLists.txt must glob every file of cpp/include/seer into SEER_SDK_HEADERS"
    assert "install(FILES ${SEER_SDK_HEADERS} DESTINATION seer_env/include/seer)" in cmake
    for source in SDK_SOURCES:
        assert f"cpp/src/{source}" in cmake, f"CMakeLists.txt must install cpp/src/{source}"
    assert all(path.suffix in (".hpp", ".h") for path in SDK.iterdir())
    assert {"seer/model.hpp", "seer/plugin.hpp", "seer/python_plugin.hpp"} <= _sdk_headers()


def test_sdk_headers_are_closed_under_include():
    sdk = _sdk_headers()
    for header in sorted(sdk):
        outside = _includes(INCLUDE / header) - sdk
        assert not outside, f"{header} includes {sorted(outside)}, which the SDK does not install"


def test_sdk_covers_what_plugins_include():
    sdk = _sdk_headers()
    private = {path.name for path in RUNTIME.glob("*.h*")}
    sources = [RUNTIME / name for name in SDK_SOURCES]
    for path in sources:  # compiled into every plugin: SDK headers only
        outside = _includes(path) - sdk
        assert not outside, f"{path.relative_to(ROOT)} includes {sorted(outside)}: not in the SDK"
    users = []
    for folder in (ROOT / "examples" / "custom_model_cpp", ROOT / "tests" / "plugins"):
        users += sorted(folder.rglob("*.cpp")) + sorted(folder.rglob("*.hpp"))
    assert len(users) > 3
    for path in users:  # SDK headers and the project's own files
        seer = {name for name in _includes(path) if name.startswith("seer/")}
        outside = (seer - sdk) | (_includes(path) & private)
        assert not outside, f"{path.relative_to(ROOT)} includes {sorted(outside)}: not in the SDK"


def test_runtime_internals_stay_out_of_the_sdk():
    sdk = _sdk_headers()
    for internal in ("executor", "parallel_executor", "local_queue", "thread_pool", "simulation"):
        assert f"seer/{internal}.hpp" not in sdk
        assert (RUNTIME / f"{internal}.hpp").is_file(), f"cpp/src/{internal}.hpp is missing"
    private = {path.name for path in RUNTIME.glob("*.h*")}
    assert not {name.removeprefix("seer/") for name in sdk} & private
