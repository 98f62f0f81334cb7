"""``python -m seer_env.demo``: honest latencies, interleaved runs, the threads that ran.

The demo used to divide by the steps requested, not those run (aircraft's
episode ends after 500: `--steps 1000` halved its latency), crash on
`--steps 0` (ZeroDivisionError), time its runs one after another (a load
that came and went made `auto` 3x faster than the configuration it chose)
and print the threads requested, not those used. Here the envs are small
and the clock is fake: every timed step takes exactly 1 ms.
"""

import re
import types

import pytest

import seer_env
from seer_env import demo

MAX_CYCLES = 8
SMALL = {"pcs_v0": dict(width=2, height=2), "aircraft_v0": dict(num_uavs=4, substeps=2)}


class FakeClock:
    """``time`` for the demo: each ``perf_counter()`` call is 1 ms after the last."""

    def __init__(self):
        self.calls = 0

    def perf_counter(self) -> float:
        self.calls += 1
        return self.calls * 1e-3

    def sleep(self, seconds: float) -> None:
        pass


@pytest.fixture
def small_demo(monkeypatch):
    """The demo on small envs that end after MAX_CYCLES steps; logs every step of every env."""
    log = []  # (workload, env number, threads used) per step, in call order
    made = []

    def make(name, **options):
        env = seer_env.make(name, **SMALL[name], max_cycles=MAX_CYCLES, **options)
        number = len(made)
        made.append(env)
        step_arrays = env.step_arrays

        def logged(actions):
            result = step_arrays(actions)
            log.append((name, number, env.runtime.threads_used))
            return result

        env.step_arrays = logged
        return env

    proxy = types.SimpleNamespace(make=make, __version__=seer_env.__version__)
    monkeypatch.setattr(demo, "seer_env", proxy)
    monkeypatch.setattr(demo, "time", FakeClock())
    return log


def rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if "ms/step" in line]


def test_latency_is_divided_by_the_steps_that_ran(small_demo, capsys):
    demo.main(["--steps", "50"])  # the episodes end long before 50
    out = capsys.readouterr().out
    assert len(rows(out)) >= 6  # serial, parallel x1, x2, ..., auto; two workloads
    for row in rows(out):
        assert "  1.000 ms/step" in row, row
        assert f"(episode over after {MAX_CYCLES - 3})" in row, row  # 3 untimed steps first


def test_runs_are_stepped_in_turn(small_demo, capsys):
    demo.main(["--steps", "4"])
    for workload in ("pcs_v0", "aircraft_v0"):
        steps = [number for name, number, _ in small_demo if name == workload]
        runs = len(set(steps))
        assert runs >= 3 and len(steps) == runs * 7  # 3 untimed + 4 timed each
        # Every window of `runs` steps steps every run once: never one run's steps in a row.
        for start in range(0, len(steps), runs):
            assert sorted(steps[start : start + runs]) == sorted(set(steps)), steps


def test_each_row_prints_the_threads_its_timed_steps_ran_on(small_demo, capsys):
    demo.main(["--steps", "4"])
    out = rows(capsys.readouterr().out)
    for workload, first in (("pcs_v0", 0), ("aircraft_v0", len(out) // 2)):
        numbers = sorted({number for name, number, _ in small_demo if name == workload})
        for row, number in zip(out[first:], numbers):
            timed = [t for n, i, t in small_demo if i == number and n == workload][3:]
            low, high = min(timed), max(timed)
            shown = str(low) if low == high else f"{low}-{high}"
            assert re.search(rf"threads used +{re.escape(shown)} ", row), (row, timed)
        assert re.search(r"threads used +1 ", out[first])  # serial runs on one thread


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_steps_below_one_is_an_argparse_error_naming_it(capsys, value):
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--steps", value])
    assert exit_info.value.code == 2
    assert "argument --steps: must be an integer >= 1, got" in capsys.readouterr().err
