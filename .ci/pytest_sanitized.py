"""Run pytest against a sanitizer-built seer_env package (``make asan-python``, ``tsan-python``).

Usage: python .ci/pytest_sanitized.py PACKAGE_DIR [pytest args]. PACKAGE_DIR
holds a copy of ``seer_env/`` with the ASan- or TSan-built ``_core``
extension. The editable install's import hook would load the regular
extension instead, so it is removed, and PACKAGE_DIR goes first on sys.path.
"""

import os
import sys

package_dir, args = os.path.abspath(sys.argv[1]), sys.argv[2:]
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
sys.path.insert(0, package_dir)

import pytest  # noqa: E402

import seer_env  # noqa: E402

if not seer_env._core.__file__.startswith(package_dir):
    sys.exit(f"expected the sanitizer build from {package_dir}, got {seer_env._core.__file__}")
print(f"seer_env._core from {seer_env._core.__file__}", flush=True)
sys.exit(pytest.main(args))
