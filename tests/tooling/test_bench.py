"""The benchmark machinery on its smoke profile: files written and well-formed (no timing)."""

import json
import signal
import subprocess
import sys
import time

import pytest

from bench import __main__ as bench
from bench import contention, report
from bench.groups import Target
from bench.regret import regret_row
from bench.timing import MAX_TURN_GROWTH, Case, run_interleaved

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# AsyncVectorEnv and SuperSuit fork while runtime threads exist (harmless here:
# the children run only Python reference envs); newer Pythons warn about it.
@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")
def test_smoke_profile_writes_json_markdown_and_plots(tmp_path):
    results = bench.main(["--profile", "smoke", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["profile"] == "smoke"
    assert data["machine"]["usable_threads"] >= 1
    workloads = {g["workload"] for g in data["groups"]}
    assert {"pcs", "aircraft", "phold", "stpa", "contention"} <= workloads
    (loaded,) = [g for g in data["groups"] if g["workload"] == "contention"]
    assert [r["name"] for r in loaded["rows"]] == ["serial", "parallel-2", "auto"]
    assert loaded["quiet_label"] in {g["label"] for g in data["groups"]}
    assert loaded["busy_processes"] == data["machine"]["usable_threads"]
    assert data["groups"][-1] is not None and data["groups"][-1]["workload"] == "contention"
    copies = [g for g in data["groups"] if g["workload"] == "branching"]
    assert [g["label"] for g in copies] == ["Snapshots: PCS 8x8", "Forks: 2 branches of PCS 8x8"]
    names = [r["name"] for r in copies[0]["rows"]]
    assert names == ["snapshot", "restore", "pickle.dumps", "pickle.loads", "deepcopy"]
    assert all(r["bytes"] > 0 and r["median_ms"] > 0 for r in copies[0]["rows"])
    assert [r["ratio"] > 0 for r in copies[0]["ratios"] + copies[1]["ratios"]] == [True] * 4
    for group in data["groups"]:
        if group["workload"] == "branching":
            continue  # copies and forks, not executors: checked above
        names = [r["name"] for r in group["rows"]]
        assert names[0] == "serial" and "auto" in names
        for row in group["rows"]:
            assert row["median_ms"] > 0 and row["p95_ms"] >= row["median_ms"]
            assert row["speedup_vs_serial"] > 0
    pcs = next(g for g in data["groups"] if g["workload"] == "pcs")
    names = {r["name"] for r in pcs["rows"]}
    assert {"parallel-1", "reference", "async-vec"} <= names
    # [contention] retired two targets: serial vs the reference is a reported ratio,
    # parallel-2 vs barrier-2 an across-groups target.
    assert not any(t["versus"] in ("reference", "barrier-2") for t in pcs["targets"])
    (vs_reference,) = pcs["ratios"]
    assert vs_reference["versus"] == "reference" and vs_reference["ratio"] > 0
    assert "met" not in vs_reference
    every = {c["text"]: c for c in data["every_group"]}
    vs_barrier = every["parallel-2 >= 0.97x barrier-2 in every group"]
    assert vs_barrier["groups"] >= 1 and vs_barrier["judged"] is False  # smoke only indicates
    aircraft = next(g for g in data["groups"] if g["workload"] == "aircraft")
    for row in aircraft["rows"]:  # inference latency split into policy and env
        assert row["policy_median_ms"] > 0 and row["env_median_ms"] > 0
    assert len(data["regret"]) == len(data["groups"]) - len(copies)
    md = (tmp_path / "results.md").read_text()
    assert md == report.markdown(results)
    for group in data["groups"]:
        assert f"### {group['label']}" in md
    assert "STPA regret" in md
    assert "Under load: the contention groups beside the quiet ones" in md
    assert "C++ serial vs the Python reference" in md and "(reported, not a target)" in md
    assert "Across groups" in md and "judged on the `full` profile" in md
    for name in ("latency_vs_threads.png", "speedup_vs_entities.png", "alternative_ratios.png"):
        png = (tmp_path / name).read_bytes()
        assert png.startswith(PNG_MAGIC) and len(png) > 1000


def rows(**medians):
    out = [
        {"name": n, "median_ms": m, "kind": "executor", "executor": n.split("-")[0]}
        for n, m in medians.items()
    ]
    report.add_ratios(out)
    return out


def test_ratios_and_targets():
    r = rows(serial=10.0, **{"parallel-2": 5.0, "reference": 1000.0})
    by = {x["name"]: x for x in r}
    assert by["parallel-2"]["speedup_vs_serial"] == 2.0
    assert by["serial"]["vs_reference"] == 100.0
    checks = report.check_targets(
        r,
        (
            Target("parallel-2", "serial", 1.5, "a"),
            Target("serial", "reference", 200.0, "b"),
            Target("parallel-2", "barrier-2", 1.25, "c"),
        ),
    )
    assert [c["met"] for c in checks] == [True, False, None]


def test_every_group_targets_find_the_worst_quiet_group():
    def group(label, quiet_label=None, **medians):
        return {"label": label, "quiet_label": quiet_label, "rows": rows(**medians)}

    groups = [
        group("a", serial=10.0, **{"parallel-1": 10.2, "parallel-2": 5.0, "barrier-2": 5.0}),
        group("b", serial=10.0, **{"parallel-1": 10.0, "parallel-2": 5.5, "barrier-2": 5.0}),
        group("c", serial=10.0),  # neither parallel case: not counted
        # Under load is judged by its own targets, never here.
        group("Under load: a", "a", serial=10.0, **{"parallel-1": 50.0, "barrier-2": 1.0}),
    ]
    checks = {c["case"]: c for c in report.every_group_checks(groups, "full")}
    vs_barrier, vs_serial = checks["parallel-2"], checks["parallel-1"]
    assert vs_barrier["groups"] == 2 and vs_barrier["below"] == ["b"]
    assert vs_barrier["worst_group"] == "b" and vs_barrier["worst_ratio"] == pytest.approx(5 / 5.5)
    assert vs_barrier["met"] is False and vs_barrier["judged"] is True
    assert vs_serial["met"] is True and vs_serial["worst_ratio"] == pytest.approx(10 / 10.2)
    lines = report.every_group_lines(list(checks.values()), loaded=False)
    assert "**missed**" in lines[0] and "1 of 2 groups below 0.97x" in lines[0]
    indicative = report.every_group_checks(groups, "default")
    assert all(not c["judged"] for c in indicative)
    assert "judged on the `full` profile" in report.every_group_lines(indicative, False)[0]
    nothing = report.every_group_checks([group("c", serial=1.0)], "full")
    assert all(c["met"] is None for c in nothing)


def test_regret_uses_only_serial_and_parallel_as_fixed_choices():
    r = rows(serial=10.0, **{"parallel-1": 8.0, "parallel-2": 4.0, "locked-2": 1.0})
    r.append({"name": "auto", "median_ms": 5.0, "kind": "auto", "choice": "parallel-2"})
    line = regret_row({"label": "g", "rows": r})
    assert line["best"] == "parallel-2"
    assert line["regret"] == pytest.approx(0.25)
    assert line["choice_regret"] == 0.0
    assert line["vs_serial"] == pytest.approx(-0.5)


# -- the contention groups' busy processes -------------------------------------------------
def _gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _wait_gone(pids, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(map(_gone, pids)):
        time.sleep(0.05)
    return all(map(_gone, pids))


def test_busy_processes_spin_inside_and_stop_on_exit():
    with contention.busy_processes(2) as procs:
        assert len(procs) == 2 and contention.still_busy(procs) == 2
        time.sleep(0.2)
        assert contention.still_busy(procs) == 2
    assert all(p.returncode is not None for p in procs)


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_busy_processes_stop_on_exception_and_ctrl_c(error):
    with pytest.raises(error):
        with contention.busy_processes(2) as procs:
            raise error("stop")
    assert all(p.returncode is not None for p in procs)


def test_busy_processes_end_by_themselves_after_max_seconds():
    with contention.busy_processes(1, max_seconds=0.3) as procs:
        procs[0].wait(timeout=10)  # exits on its own, not when the block ends
        assert contention.still_busy(procs) == 0


def test_busy_processes_end_when_the_bench_is_killed():
    code = (
        "import sys, time\n"
        "from bench import contention\n"
        "with contention.busy_processes(2) as procs:\n"
        "    print(' '.join(str(p.pid) for p in procs), flush=True)\n"
        "    time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True
    ) as runner:
        try:
            pids = [int(p) for p in runner.stdout.readline().split()]
            assert len(pids) == 2 and not any(map(_gone, pids))
            runner.send_signal(signal.SIGKILL)  # no finally runs in the bench
            runner.wait(timeout=10)
            assert _wait_gone(pids), "busy processes outlived the bench"
        finally:
            runner.kill()


def test_busy_processes_validate_their_arguments():
    with pytest.raises(ValueError, match="count"):
        with contention.busy_processes(-1):
            pass


def test_contention_report_sits_beside_the_quiet_group():
    quiet = {"label": "PCS 64", "rows": rows(serial=10.0, **{"parallel-2": 5.0})}
    quiet["rows"].append({"name": "auto", "median_ms": 5.0, "kind": "auto", "choice": "x2"})
    loaded = {
        "label": "Under load: PCS 64",
        "quiet_label": "PCS 64",
        "busy_processes": 2,
        "rows": rows(serial=20.0, **{"parallel-2": 40.0}),
        "targets": [],
    }
    loaded["rows"].append({"name": "auto", "median_ms": 21.0, "kind": "auto", "choice": "serial"})
    lines = report.contention_lines({"groups": [quiet, loaded]})
    text = "\n".join(lines)
    assert "| PCS 64 | parallel-2 | 5.000 | 40.000 | 8.00x | 2.00x | 0.50x |" in text
    assert "auto 0.95x the best fixed choice under load (needs 0.95x): met" in text
    assert report.auto_vs_best(loaded) == pytest.approx(20.0 / 21.0)
    assert report.contention_lines({"groups": [quiet]}) == []


def test_group_selection_puts_contention_groups_last_or_drops_them():
    groups = bench.select_groups("default", None)
    loaded = [g.quiet_label is not None for g in groups]
    assert sum(loaded) == 3 and loaded == sorted(loaded)  # quiet first
    labels = {g.label for g in groups}
    for g in groups:
        if g.quiet_label is not None:
            assert g.quiet_label in labels and g.label.startswith("Under load: ")
    assert not any(g.quiet_label for g in bench.select_groups("default", None, contention=False))
    only = bench.select_groups("default", "under load")
    assert len(only) == 3 and all(g.workload == "contention" for g in only)
    full = bench.select_groups("full", None)
    loaded_full = {g.quiet_label for g in full if g.quiet_label is not None}
    assert len(loaded_full) == 5
    assert {"PCS 128x128, moves every 450 min", "PCS 256x256, moves every 450 min"} <= loaded_full
    assert all(g.quiet_label in {x.label for x in full} for g in full if g.quiet_label)


def test_dict_overhead_lines_give_the_cost_per_agent_and_the_ceiling():
    from bench.python_layer import dict_overhead_lines

    medians = {"dict serial": 9.0, "arrays serial": 8.0, "dict parallel-2": 5.0}
    got = [{"name": n, "median_ms": m, "agents": 4000} for n, m in medians.items()]
    got.append({"name": "arrays parallel-2", "median_ms": 4.5, "agents": 4000})
    assert dict_overhead_lines(got) == [
        "dict - arrays, serial (difference of medians): 1.000 ms, 0.250 us per agent "
        "(target <= 0.25)",
        "dict - arrays, parallel-2 (difference of medians): 0.500 ms, 0.125 us per agent "
        "(target <= 0.25)",
        "arrays parallel-2 vs arrays serial: 1.78x (the ceiling on the dict speed-up)",
    ]
    assert dict_overhead_lines(got[:1]) == []
    # With each round's turn medians, the difference is paired by round: the
    # median of (1, -0.5, 1.1), not 9.5 - 8.4.
    got[0]["turn_medians_ms"] = [9.0, 12.0, 9.5]
    got[1]["turn_medians_ms"] = [8.0, 12.5, 8.4]
    assert dict_overhead_lines(got)[0] == (
        "dict - arrays, serial (paired by round): 1.000 ms, 0.250 us per agent (target <= 0.25)"
    )


def test_policy_hidden_lines_bound_async_by_the_one_thread_env():
    from bench.python_layer import policy_hidden_lines

    rows = [
        {"name": "sync", "median_ms": 60.0, "policy_median_ms": 30.0, "env_median_ms": 30.0},
        {
            "name": "sync parallel-2",
            "median_ms": 48.0,
            "policy_median_ms": 30.0,
            "env_median_ms": 18.0,
        },
        {"name": "async 2 halves", "median_ms": 36.0},
    ]
    # The halves step serially: the 2 cores share P + E1 = 60 ms, so async
    # can reach 30 ms (1.6x), more than 2E = 36 ms of CPU would allow (1.45x).
    assert policy_hidden_lines(rows) == [
        "async 2 halves vs the best sync case (sync parallel-2): 1.33x",
        "policy 30.000 ms, env on 2 threads 18.000 ms (on 1 thread 30.000 ms): 40% of the "
        "policy time hidden; the 2-core bound on async vs sync parallel-2 is 1.60x",
    ]
    # Without the one-thread row, E1 is taken as 2E.
    assert policy_hidden_lines(rows[1:])[1].endswith(
        "(on 1 thread 36.000 ms): 40% of the "
        "policy time hidden; the 2-core bound on "
        "async vs sync parallel-2 is 1.45x"
    )
    assert policy_hidden_lines(rows[:2]) == []


class FakeClock:
    """time.perf_counter for run_interleaved: advances only when a case steps."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def case(self, name: str, seconds: float) -> Case:
        def step():
            self.now += seconds

        return Case(name, step)


FAST = 2.0**-10  # step times the fake clock adds exactly (powers of two)


@pytest.mark.parametrize(
    ("min_turn_s", "expected"),
    [(0.0, 3), (2 * FAST, 3), (4 * FAST, 4), (50 * FAST, 50), (10.0, 3 * MAX_TURN_GROWTH)],
)
def test_min_turn_sets_steps_per_turn_from_the_fastest_case(monkeypatch, min_turn_s, expected):
    clock = FakeClock()
    monkeypatch.setattr("bench.timing.time.perf_counter", clock)
    monkeypatch.setattr("bench.timing.time.sleep", lambda s: None)
    cases = [clock.case("slow", 32 * FAST), clock.case("fast", FAST)]
    steps = run_interleaved(
        cases, warmup_steps=2, rounds=4, steps_per_turn=3, min_turn_s=min_turn_s
    )
    assert steps == expected
    # Every case runs the same steps, so all stay at the same simulated step.
    assert [len(c.samples) for c in cases] == [4 * expected, 4 * expected]
    assert cases[1].samples == [FAST] * (4 * expected)


def test_noise_floor_compares_auto_with_the_fixed_case_of_its_choice():
    def group(auto_ms, twin_ms, choice="parallel-2", quiet_label=None):
        rows = [
            {"name": "serial", "median_ms": 9.0},
            {"name": choice, "median_ms": twin_ms},
            {"name": "auto", "median_ms": auto_ms, "choice": choice},
        ]
        return {"label": "g", "rows": rows, "quiet_label": quiet_label}

    groups = [group(2.0, 2.2), group(2.0, 1.6), group(4.0, 4.0, choice="serial")]
    no_twin = group(1.0, 9.0, choice="parallel-4")
    no_twin["rows"].pop(1)  # auto chose a configuration no fixed case ran
    groups += [group(1.0, 0.5, quiet_label="g"), no_twin]
    floor = report.noise_floor(groups)
    # The group without a twin gives no pair; the loaded one is counted apart.
    assert floor["pairs"] == 3
    assert (floor["min_ratio"], floor["max_ratio"]) == (0.8, pytest.approx(1.1))
    assert report.noise_floor(groups, under_load=True)["max_ratio"] == 0.5
    assert report.noise_floor(groups[:0]) is None
    assert "3 groups" in report.noise_floor_line(floor)


def test_memory_rows_count_the_pending_events_and_rss_above_the_import():
    from bench import memory

    rows = [
        memory.measure(32, 2, executor, threads, 450.0) for executor, threads in memory.EXECUTORS
    ]
    assert [r["executor"] for r in rows] == ["serial-1", "parallel-2"]
    # Same config, seed and steps: the same events pending on both executors.
    assert rows[0]["pending"] == rows[1]["pending"] > 0
    for r in rows:
        assert r["peak_mb"] >= r["rss_mb"] >= r["import_mb"] > 0
        assert r["bytes_per_pending"] == pytest.approx(r["above_import_mb"] * 2**20 / r["pending"])


def test_memory_rows_with_checked_steps_and_a_shed():
    from bench import memory

    rows = memory.run([8], steps=1, check_steps=(2,), shed=True)
    names = [r["executor"] for r in rows]
    assert names == [
        "serial-1",
        "parallel-2",
        "parallel-2, as many steps unshed",
        "parallel-2, shed",
    ]
    assert {r["check_steps"] for r in rows} == {2}
    assert len({r["pending"] for r in rows}) == 1  # the same events pending in every case
    shed = rows[-1]
    assert shed["serial_loop"] or shed["one_thread_rounds"]  # the stalled worker was shed
    assert "shed (" in "\n".join(memory.table(rows))


def test_many_core_model_and_targets():
    from bench import many_core

    counters = dict(events=19886.0, cross_events=5710.0, rounds=60.0, ready=19080.0, entities=4096)
    here = {
        "PCS 64x64, moves every 450 min": {
            "rows": {
                "serial-1": dict(counters, median_ms=3.0, rounds=1.0, ready=0.0),
                "rounds1-1": dict(counters, median_ms=3.8),
                "barrier-1": dict(counters, median_ms=5.2, ready=0.0),
            },
            "digests_equal": True,
        }
    }
    table = many_core.model_table(here, [1, 2, 16], [16])
    rows = table["PCS 64x64, moves every 450 min"]["rows"]
    assert rows["parallel-1"]["median_ms"] == 3.0  # a pool of one runs the serial loop
    assert rows["parallel-16"]["median_ms"] < rows["parallel-2"]["median_ms"] < 3.8
    # Stealing evens out a round's visits; static slices wait for the fullest.
    assert many_core.imbalance("parallel", 16, counters) < many_core.imbalance(
        "barrier", 16, counters
    )
    targets = many_core.check_targets(table)
    by_case = {(t["case"], t["versus"]): t for t in targets}
    assert by_case[("parallel-16", "barrier-16")]["met"] is True
    assert by_case[("parallel-16", "serial-1")]["met"] is None  # no PCS 128x128 in this table
    lines = many_core.markdown(table, targets, "model")
    assert any(line.startswith("| parallel-16 |") for line in lines)
    # Interleaving: every case of a workload once per round, in a rotating order.
    runs = {
        "w": {
            "serial-1": [{"median_ms": 2.0, "digest": "a", **counters}] * 3,
            "parallel-2": [{"median_ms": 1.0, "digest": "a", **counters}] * 3,
        }
    }
    summary = many_core.summarize(runs)["w"]
    assert summary["digests_equal"] and summary["rows"]["parallel-2"]["vs_serial"] == 2.0


def test_memory_flag_adds_the_rows_to_json_and_markdown(tmp_path, monkeypatch):
    from bench import memory

    measured = memory.run([16], steps=1)  # the real thing, small (the bench asks for 128, 256)
    monkeypatch.setattr(memory, "run", lambda sizes: measured)
    args = ["--profile", "smoke", "--only", "PHOLD 64", "--no-contention", "--memory"]
    results = bench.main([*args, "--out", str(tmp_path)])
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["memory"] == results["memory"] == measured
    md = (tmp_path / "results.md").read_text()
    assert "### Memory: RSS per pending event" in md
    table = memory.table(measured)
    assert len(table) == 2 + len(measured) and all(line in md for line in table)
