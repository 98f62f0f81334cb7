import os

import pytest

import seer_env


def executor_configs(max_threads: int = 16) -> list[tuple[str, int]]:
    """Every (executor, num_threads) pair to compare against serial."""
    configs = [("serial", 1)]
    for name in seer_env.executor_names():
        if name == "serial":
            continue
        configs += [(name, t) for t in (1, 2, 3, 4, 8, 16) if t <= max_threads]
    return configs


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
