"""Smoke test of an installed seer_env (a wheel or an sdist build in a fresh venv).

Imports only the installed package: no tests/support helper, no repository path on
sys.path (the one example model it runs, examples/numba_pcs.py, is loaded by file). Run
from outside the checkout (.ci/run does: `cd "$(mktemp -d)" && python -m pytest
CHECKOUT/.ci/smoke`), so that the source tree's `seer_env/` is not on sys.path;
SEER_SOURCE_TREE names the checkout, and the first test fails if the package came
from it.
"""

import importlib.metadata
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import seer_env
from seer_env import _core, vector

WORKLOADS = {"pcs_v0": dict(width=6, height=4), "aircraft_v0": dict(num_uavs=48)}
STEPS = 6
# What a user sees; then the benchmark's comparison executors join, to be compared too.
USER_EXECUTORS = seer_env.executor_names()
_core._register_comparison_executors()


def test_a_user_sees_the_runtime_executors_and_no_test_models():
    assert USER_EXECUTORS == ["serial", "parallel"]
    assert not hasattr(_core, "_register_test_models")  # a wheel has none compiled in


def test_the_installed_package_is_imported():
    package = Path(seer_env.__file__).resolve().parent
    source_tree = os.environ.get("SEER_SOURCE_TREE")
    if source_tree:  # (the venv itself may live under the checkout's build/)
        assert package != Path(source_tree).resolve() / "seer_env", package
    assert Path(sysconfig.get_paths()["purelib"]).resolve() in package.parents, package
    assert Path(_core.__file__).resolve().parent == package
    assert seer_env.__version__ == importlib.metadata.version("seer_env")
    assert {"pcs", "aircraft", "phold"} <= set(seer_env.model_names())


def _arrays_run(name, executor, threads):
    env = seer_env.make(name, executor=executor, num_threads=threads, **WORKLOADS[name])
    env.reset(seed=3)
    space = env.action_space(env.possible_agents[0])
    space.seed(3)
    actions = np.stack([space.sample() for _ in env.possible_agents])
    out = []
    for _ in range(STEPS):
        out += [a.tobytes() for a in env.step_arrays(actions)]
    env.close()
    return b"".join(out)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_executor_returns_the_serial_bytes(name):
    serial = _arrays_run(name, "serial", 1)
    for executor in seer_env.executor_names():
        for threads in (1, 2, 3):
            if executor == "serial" and threads != 1:
                continue
            assert _arrays_run(name, executor, threads) == serial, (executor, threads)


def _dict_run(name, threads):
    env = seer_env.make(name, num_threads=threads, **WORKLOADS[name])
    observations, infos = env.reset(seed=5)
    rng = np.random.default_rng(5)
    out = [repr(sorted(infos.items()))]
    while env.agents and len(out) < 4 * STEPS:
        space = env.action_space(env.agents[0])
        actions = {a: space.sample() for a in env.agents}
        if name == "pcs_v0":
            actions = {a: int(rng.integers(0, space.n)) for a in env.agents}
        else:
            actions = {a: rng.uniform(-1, 1, space.shape).astype(space.dtype) for a in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        out += [b"".join(o.tobytes() for o in observations.values())]
        out += [repr(x) for x in (rewards, terminations, truncations, infos)]
    env.close()
    return out


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_the_dict_api_matches_on_both_item_paths(name):
    """The dict bridge reads its dicts in place on known CPython layouts, else the public API."""
    known = (3, 11) <= sys.version_info[:2] <= (3, 13)
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    was = _core._dict_entries()
    assert was is (known and not free_threaded)
    try:
        in_place = _dict_run(name, 2)
        _core._dict_entries(False)
        assert _dict_run(name, 2) == in_place == _dict_run(name, 1)
    finally:
        _core._dict_entries(was)


def test_the_vector_env_equals_single_envs():
    config = dict(width=4, height=3, max_cycles=6)
    venv = vector.make("pcs_v0", 3, num_threads=2, **config)  # 3 instances
    obs, _ = venv.reset(seed=10)
    singles = [seer_env.make("pcs_v0", executor="serial", **config) for _ in range(3)]
    rows = [np.stack(list(e.reset(seed=10 + i)[0].values())) for i, e in enumerate(singles)]
    assert obs.tobytes() == np.concatenate(rows).tobytes()
    actions = np.zeros(venv.num_envs, dtype=np.int64)
    for _ in range(4):
        obs, rewards, terminations, truncations, _ = venv.step(actions)
    assert venv.observation_space.contains(obs)
    venv.close()


def test_a_numba_model_runs_compiled_on_worker_threads():
    pytest.importorskip("numba")
    path = Path(__file__).resolve().parents[2] / "examples" / "numba_pcs.py"
    spec = importlib.util.spec_from_file_location("numba_pcs", path)
    example = importlib.util.module_from_spec(spec)
    sys.modules["numba_pcs"] = example  # numba finds a function's globals through its module
    spec.loader.exec_module(example)
    NumbaPcs = example.NumbaPcs

    def run(executor, threads):
        env = seer_env.SeerParallelEnv(
            NumbaPcs, {"width": 3, "height": 3}, executor=executor, num_threads=threads
        )
        env.reset(seed=7)
        actions = np.full(len(env.possible_agents), 2, dtype=np.int64)
        out = b"".join(a.tobytes() for _ in range(STEPS) for a in env.step_arrays(actions))
        env.close()
        return out

    assert run("parallel", 2) == run("serial", 1)
