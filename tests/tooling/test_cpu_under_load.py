"""bench.cpu_under_load: a --quick run's table and JSON, and neighbours that never outlive it.

Only the machinery is checked (fields present, values sane), never a target:
two tiny steps per executor on a shared machine say nothing about the pool.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bench import cpu_under_load as cul

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread CPU clocks and /proc: Linux only"
)


def _gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie counts as gone: nobody may reap an orphan here)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _wait_gone(pids, timeout=10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(map(_gone, pids)):
        time.sleep(0.05)
    return all(map(_gone, pids))


def _my_neighbours() -> list[int]:
    """Live neighbour processes started by this process (other runs' are not ours to judge)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or _gone(int(entry)):
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            continue
        if ppid == os.getpid() and cul.MARKER in cmdline:
            found.append(int(entry))
    return found


def test_quick_run_writes_the_table_and_the_json(tmp_path, capsys):
    out = tmp_path / "cpu.json"
    cul.main(["--quick", "--neighbours", "1", "--json", str(out)])
    data = json.loads(out.read_text())
    assert data["commit"] and data["date"]
    assert data["machine"]["nproc"] >= 1 and len(data["machine"]["load_after"]) == 3
    quiet, loaded = data["conditions"]
    assert (quiet["neighbours"], loaded["neighbours"]) == (0, 1)
    labels = ["PCS 8x8", "Aircraft 16", "PHOLD 64"]
    for cond in (quiet, loaded):
        assert [c["label"] for c in cond["cases"]] == labels
        for case in cond["cases"]:
            assert [r["name"] for r in case["rows"]] == ["serial", "parallel-2", "auto"]
            for row in case["rows"]:
                assert row["steps"] == len(row["samples"]) == 2  # 2 rounds x 1 step
                assert row["wall_s"]["min"] > 0 and row["cpu_s"]["min"] > 0
                # the caller runs every step; the split adds up to the whole
                for s in row["samples"]:
                    assert s["caller_cpu_s"] > 0 and s["events"] > 0
                    parts = s["caller_cpu_s"] + s["workers_cpu_s"] + s["other_cpu_s"]
                    assert parts == pytest.approx(s["cpu_s"], abs=1e-9)
            assert case["rows"][0]["cpu_ratio"] == 1.0
    # Only the loaded runs are judged, on the rows the targets name.
    assert all(not r["targets"] for c in quiet["cases"] for r in c["rows"])
    auto = loaded["cases"][0]["rows"][2]
    assert set(auto["targets"]) == {t.text for t in cul.TARGETS if t.executor == "auto"}
    # The neighbour worked: on its own before each case, and it lasted the case.
    for case in loaded["cases"]:
        assert case["alone_units_per_s"] > 0 and case["neighbours_still_running"] == 1
    md = capsys.readouterr().out
    assert "| case | executor | ran on | wall ms/step | CPU ms/step |" in md
    assert "## Loaded: 1 neighbour(s)" in md and ("met: " in md or "MISSED: " in md)
    assert _my_neighbours() == []


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_neighbours_count_work_and_stop_when_the_body_raises(error):
    with pytest.raises(error):
        with cul.neighbours(2, max_seconds=60) as nb:
            pids = [p.pid for p in nb.procs]
            assert nb.alone_rate(0.1) > 0  # both count into the shared slots
            raise error("stop")
    assert _wait_gone(pids) and _my_neighbours() == []


def test_neighbours_end_when_the_bench_is_killed():
    # A kill -9 runs no finally: the neighbours notice their parent is gone.
    code = (
        "import time\n"
        "from bench.cpu_under_load import neighbours\n"
        "with neighbours(1, max_seconds=60) as nb:\n"
        "    print(nb.procs[0].pid, flush=True)\n"
        "    time.sleep(60)\n"
    )
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) as run:
        try:
            pid = int(run.stdout.readline())
            assert not _gone(pid)
            run.send_signal(signal.SIGKILL)
            run.wait(timeout=10)
            assert _wait_gone([pid]), "a neighbour outlived the bench"
        finally:
            run.kill()
