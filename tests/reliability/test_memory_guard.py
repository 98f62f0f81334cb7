"""The memory guard: an event storm stops at the pending-event limit, before the memory runs out.

The limit comes from the same figure as the construction check (MemAvailable, the cgroup limit
or SEER_MEMORY_LIMIT): half of it at 152 B an event. SEER_MEMORY_LIMIT is read strictly: a
typo is a ValueError naming the variable, never a limit of 8 bytes or none.
"""

import subprocess
import sys
import textwrap

import pytest
from executor_cases import executor_configs

import seer_env
from seer_env import _core, vector

CASCADE = dict(num_entities=8, mode=7, culprit=3, fail_after=2.0)  # each event schedules two


def storm(executor="serial", num_threads=1):
    sim = seer_env.Simulation(
        "faulty", CASCADE, executor=executor, num_threads=num_threads, event_budget=0
    )
    sim.reset(0)
    return sim


# The comparison executors (locked, barrier: the benchmark's) keep only the event budget.
GUARDED = [(e, t) for e, t in executor_configs(4) if e in ("serial", "parallel")]


@pytest.mark.parametrize("executor,num_threads", GUARDED)
def test_a_cascade_stops_at_the_pending_limit_and_the_env_recovers(
    monkeypatch, executor, num_threads
):
    monkeypatch.setenv("SEER_MEMORY_LIMIT", "32M")
    sim = storm(executor, num_threads)
    limit = 32 * 2**20 // 2 // 152
    assert sim.pending_limit == limit
    with pytest.raises(
        seer_env.EventBudgetExceeded,
        match=rf"memory guard: \d+ events pending .* "
        rf"more than the limit of {limit} \(about 16\.8 MB, half of the memory",
    ):
        sim.run_until(10.0)
    with pytest.raises(RuntimeError, match="reset"):
        sim.run_until(10.0)
    sim.reset(1)
    sim.run_until(1.0)  # before the cascade starts: works again
    assert sim.pending_count < limit


def test_the_vector_env_shares_the_limit_among_its_copies(monkeypatch):
    monkeypatch.setenv("SEER_MEMORY_LIMIT", "64M")
    alone = seer_env.Simulation("pcs", dict(width=4, height=4))
    vec = _core.VectorSimulation("pcs", dict(width=4, height=4), 4, executor="serial")
    assert alone.pending_limit == 64 * 2**20 // 2 // 152
    assert vec.pending_limit == alone.pending_limit // 4


@pytest.mark.parametrize("executor,threads", [("serial", 1), ("parallel", 2)])
def test_a_storm_stops_well_inside_the_memory_limit_it_names(executor, threads):
    # A child process per executor, so that its peak RSS is this storm's alone.
    code = textwrap.dedent(
        f"""
        import os
        os.environ["SEER_MEMORY_LIMIT"] = "512M"
        import seer_env
        from seer_env import _core
        _core._register_test_models()
        sim = seer_env.Simulation("faulty", dict(num_entities=8, mode=7, culprit=3,
                                  fail_after=2.0), executor="{executor}", num_threads={threads},
                                  event_budget=0)
        sim.reset(0)
        try:
            sim.run_until(10.0)
            raise SystemExit("the storm was not stopped")
        except seer_env.EventBudgetExceeded as error:
            assert "memory guard" in str(error), error
        # VmHWM: this program's own peak (ru_maxrss would keep the forking parent's).
        with open("/proc/self/status") as f:
            print(next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) * 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) < 512 * 2**20  # the interpreter and numpy included


@pytest.mark.parametrize(
    "value,limit",
    [
        ("268435456", 268435456),
        ("256M", 256 * 2**20),
        ("256MiB", 256 * 2**20),
        ("256mb", 256 * 2**20),
        ("1G", 2**30),
        ("2T", 2 * 2**40),
        ("4096K", 4096 * 2**10),
        ("100000B", 100000),
    ],
)
def test_memory_limit_values_with_units(monkeypatch, value, limit):
    monkeypatch.setenv("SEER_MEMORY_LIMIT", value)
    sim = seer_env.Simulation("phold", {"num_entities": 16, "population": 1})
    assert sim.pending_limit == max(limit // 2 // 152, 2 * 16)  # phold: `population` per entity


def test_memory_limit_max_means_no_limit(monkeypatch):
    monkeypatch.setenv("SEER_MEMORY_LIMIT", "max")
    assert seer_env.Simulation("phold", {"num_entities": 16}).pending_limit == 2**64 - 1


@pytest.mark.parametrize(
    "value,why",
    [
        ("abc", "no digits"),
        ("-1", "no digits"),
        ("8 G", "unknown unit"),
        ("8X", "unknown unit"),
        ("1.5G", "unknown unit"),
        ("0", "a limit of 0 bytes"),
        ("0G", "a limit of 0 bytes"),
        ("99999999999999999999", "too large"),
        ("17179869184T", "too large"),
    ],
)
def test_a_bad_memory_limit_is_a_value_error_naming_the_variable(monkeypatch, value, why):
    monkeypatch.setenv("SEER_MEMORY_LIMIT", value)
    expected = rf"SEER_MEMORY_LIMIT must be a byte count .* got '{value}' \({why}"
    with pytest.raises(ValueError, match=expected):
        seer_env.Simulation("phold", {"num_entities": 16})
    with pytest.raises(ValueError, match="SEER_MEMORY_LIMIT"):
        vector.make("pcs_v0", num_envs=2, width=2, height=2, executor="serial")
