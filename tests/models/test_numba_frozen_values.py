"""The NumbaModel disk cache is keyed on the global values numba freezes into the code.

numba compiles a global (`SCALE = float(os.environ["MODEL_SCALE"])`) into the
machine code as a constant. The cache used to be keyed on the source only, so
a second process with another MODEL_SCALE loaded the first one's code
(compiled observation 2.0, interpreted 10.0, `from_cache: True`).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba_faulty import Faulty

import seer_env
from seer_env.models.numba import compile as numba_compile
from seer_env.models.numba import frozen_values

pytest.importorskip("numba")

SCALED = textwrap.dedent(
    """
    import os

    import numpy as np
    from gymnasium import spaces

    import seer_env

    SCALE = float(os.environ["MODEL_SCALE"])  # frozen into the compiled observe


    class Scaled(seer_env.NumbaModel):
        state_dtype = np.dtype([("x", "<f8")])
        public_dtype = np.dtype([("x", "<f8")])
        event_kinds = ("NOTHING",)

        def __init__(self, n=2, compiled=True):
            super().__init__(compiled=compiled)
            self.num_entities = self.num_agents = n
            self.lookahead, self.dt = 1.0, 1.0
            self.observation_space = spaces.Box(-np.inf, np.inf, (1,), np.float32)
            self.action_space = spaces.Discrete(2)

        @staticmethod
        def on_action(ctx, state, snapshot, params, action):
            pass

        @staticmethod
        def on_event(ctx, state, snapshot, params, kind, payload):
            pass

        @staticmethod
        def write_snapshot(state, public, params):
            public["x"] = state["x"]

        @staticmethod
        def observe(agent, state, snapshot, params, out):
            out[0] = SCALE

        @staticmethod
        def reward(agent, state, snapshot, params):
            return 0.0
    """
)

OBSERVE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {path!r})
    import seer_env, scaled
    from seer_env.models.numba import compile_report
    env = seer_env.SeerParallelEnv(scaled.Scaled, {{}}, num_threads=1)
    observations, _ = env.reset(seed=0)
    report = compile_report()["scaled.Scaled"]
    print("observed", float(observations["agent_0"][0]), "from_cache", report["from_cache"])
    """
)


@pytest.mark.slow
def test_a_second_process_with_another_global_value_does_not_load_the_first_ones_code(tmp_path):
    (tmp_path / "scaled.py").write_text(SCALED)
    base = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "SEER_ENV_NUMBA_CACHE": str(tmp_path / "seer"),
    }

    def observe(scale: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", OBSERVE.format(path=str(tmp_path))],
            env={**base, "MODEL_SCALE": scale},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.strip()

    assert observe("2.0") == "observed 2.0 from_cache False"
    assert observe("10.0") == "observed 10.0 from_cache False"  # was: 2.0, from_cache True
    assert observe("2.0") == "observed 2.0 from_cache True"  # the cache still serves each value


# -- what the key holds (no compiling) -------------------------------------------------------------
LIMIT = 3.5
TABLE = np.arange(4.0)
NAMES = ["a", "b"]


def _reads_globals(x):
    return x * LIMIT + TABLE[0] + np.float64(1.0)


def _closure(value):
    def inner(x):
        return x + value

    return inner


def _calls_helper(x):
    return _closure(1.0)(x)


def _reads_a_list(x):
    return NAMES[0]


def _bytes_of(functions) -> dict[str, bytes]:
    values, _, reason = frozen_values.frozen_values(functions)
    assert reason is None
    return dict(values)


def test_globals_are_hashed_by_value(monkeypatch):
    before = _bytes_of([_reads_globals])
    assert before[f"{__name__}._reads_globals:LIMIT"] == b"float:3.5"
    assert f"{__name__}._reads_globals:np.float64" in before  # a class: by its name
    monkeypatch.setattr(sys.modules[__name__], "TABLE", np.arange(4.0) + 1)
    after = _bytes_of([_reads_globals])
    assert after[f"{__name__}._reads_globals:TABLE"] != before[f"{__name__}._reads_globals:TABLE"]
    assert after[f"{__name__}._reads_globals:LIMIT"] == before[f"{__name__}._reads_globals:LIMIT"]


def test_closure_variables_are_hashed_by_value():
    one, two = _bytes_of([_closure(1.0)]), _bytes_of([_closure(2.0)])
    assert list(one) == [f"{__name__}._closure.<locals>.inner:value"]
    assert one != two


def test_a_value_that_cannot_be_hashed_stably_turns_the_disk_cache_off():
    values, _, reason = frozen_values.frozen_values([_reads_a_list])
    assert values == []
    assert reason.startswith(f"'NAMES', read by {__name__}._reads_a_list, is a builtins.list")


def test_functions_called_are_followed_for_their_sources_and_values():
    _, followed, reason = frozen_values.frozen_values([_calls_helper])
    assert reason is None and _closure in followed


class Unstable(Faulty):
    """Faulty, compiled afresh here with a (simulated) value that cannot be hashed."""


def test_a_model_reading_an_unhashable_value_is_not_cached_on_disk(monkeypatch, tmp_path):
    monkeypatch.setenv("SEER_ENV_NUMBA_CACHE", str(tmp_path / "seer"))
    monkeypatch.setattr(
        frozen_values, "frozen_values", lambda functions: ([], [], "'X', read by f, is a list")
    )
    seer_env.SeerParallelEnv(Unstable, {}, num_threads=1)
    report = numba_compile.compile_report()[f"{__name__}.Unstable"]
    assert report["from_cache"] is False
    assert report["disk_cache"] == "off: 'X', read by f, is a list"
    assert not (tmp_path / "seer").exists()  # no entry file: never a hit for another value
