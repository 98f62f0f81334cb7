import os
import signal

import pytest

import seer_env

# Tests are grouped by area (tests/<area>/); what several areas share is in
# tests/support/ (on sys.path: pyproject.toml's pytest pythonpath).
# The test-only models (faulty: contract breaches on purpose; compiled into an
# editable install's extension, SEER_BUILD_TEST_MODELS) and the benchmark's
# comparison executors (locked, barrier) are not registered by default; the tests
# use them throughout.
if not hasattr(seer_env._core, "_register_test_models"):
    raise RuntimeError(
        "seer_env's extension was built without the test models: the tests run on an "
        'editable install (pip install -e ".[test]"), or pass '
        "-Ccmake.define.SEER_BUILD_TEST_MODELS=ON"
    )
seer_env._core._register_test_models()
seer_env._core._register_comparison_executors()

# A run started in the background without job control (`cmd &` in a script)
# inherits an ignored SIGINT, and Python then installs no KeyboardInterrupt
# handler: the interrupt tests, which send SIGINT to themselves and to their
# child interpreters, would hang. A handled SIGINT is reset at exec, so
# restoring Python's handler here covers the children too.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def _private_stpa_cache(tmp_path_factory):
    """Point STPA's decision cache at a per-run file: tests never touch the user's cache
    (and a decision cached by an earlier run never changes what a test exercises)."""
    path = tmp_path_factory.mktemp("stpa") / "stpa.json"
    old = os.environ.get("SEER_STPA_CACHE")
    os.environ["SEER_STPA_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("SEER_STPA_CACHE", None)
    else:
        os.environ["SEER_STPA_CACHE"] = old
