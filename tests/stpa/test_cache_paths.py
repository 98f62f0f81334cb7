"""The STPA decision cache at a path that is not a regular file: a miss, left alone.

`SEER_STPA_CACHE=/dev/null` run as root used to replace the null device with
a JSON file, a FIFO made `reset()` hang in the read, and a symlink was
replaced by a file instead of followed. The real /dev/null is only ever
`stat`ed here: the writes go to FIFOs, directories and device nodes made
under tmp_path.
"""

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from seer_env import stpa
from seer_env.stpa import cache as stpa_cache
from seer_env.stpa import hardware
from seer_env.stpa import load as stpa_load
from seer_env.stpa import reuse as stpa_reuse

PHOLD = dict(num_entities=64, population=2, remote=0.5, lookahead=0.2, work=10)
ENTRY = {
    "identity": {"model": "phold"},
    "report": {"choice": {"executor": "serial", "num_threads": 1}},
}
DEADLINE_S = 30.0


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch):
    """A quiet machine with 4 usable threads and no decision validated yet in this process."""
    monkeypatch.setattr(stpa_load, "DEFAULT", stpa_load.SimulatedLoad())
    monkeypatch.setattr(stpa_reuse, "_VALIDATED", set())
    monkeypatch.delenv("SEER_NUM_THREADS", raising=False)
    features = dict(hardware.machine_features())
    features.update(usable_threads=4, physical_cores=4, affinity_cpus=4)
    monkeypatch.setattr(hardware, "machine_features", lambda: dict(features))


def within_deadline(fn, fifo: Path | None = None):
    """``fn()``'s result; fails (and unblocks a reader of ``fifo``) if it takes too long."""
    result: dict = {}

    def run():
        try:
            result["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 (reported by the assertion below)
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    if thread.is_alive() and fifo is not None:
        # Let the blocked open return: a writer appears, then goes (EOF).
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(DEADLINE_S)
        pytest.fail(f"blocked reading the FIFO {fifo} for {DEADLINE_S:.0f} s")
    assert not thread.is_alive(), f"still running after {DEADLINE_S:.0f} s"
    if "error" in result:
        raise result["error"]
    return result["value"]


def make_fifo(tmp_path: Path) -> Path:
    path = tmp_path / "stpa.fifo"
    os.mkfifo(path)
    return path


def test_a_fifo_is_a_miss_never_read_blocking_and_left_alone(tmp_path):
    fifo = make_fifo(tmp_path)
    cache = stpa_cache.DecisionCache(fifo)
    assert within_deadline(lambda: cache.get("k"), fifo) is None
    status = within_deadline(lambda: cache.put("k", ENTRY), fifo)
    assert status == f"not stored ({fifo} is a FIFO, not a regular file: left alone)"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == [fifo.name]  # no temporary file left


def test_choose_with_a_fifo_as_the_cache_measures_and_reports_it(monkeypatch, tmp_path):
    fifo = make_fifo(tmp_path)
    monkeypatch.setenv("SEER_STPA_CACHE", str(fifo))
    decision = within_deadline(lambda: stpa.choose("phold", PHOLD), fifo)
    assert decision.report["source"] == "preflight"
    assert decision.report["cache"]["outcome"] == "not stored"
    assert "is a FIFO, not a regular file: left alone" in decision.report["cache"]["status"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_directory_is_a_miss_and_left_alone(tmp_path):
    directory = tmp_path / "stpa.json"
    directory.mkdir()
    cache = stpa_cache.DecisionCache(directory)
    assert cache.get("k") is None
    assert cache.put("k", ENTRY).endswith("is a directory, not a regular file: left alone)")
    assert directory.is_dir() and not any(directory.iterdir())


def test_a_symlink_to_a_fifo_is_a_miss_and_neither_is_replaced(tmp_path):
    fifo = make_fifo(tmp_path)
    link = tmp_path / "stpa.json"
    link.symlink_to(fifo)
    cache = stpa_cache.DecisionCache(link)
    assert within_deadline(lambda: cache.get("k"), fifo) is None
    assert "is a FIFO" in within_deadline(lambda: cache.put("k", ENTRY), fifo)
    assert link.is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_to_a_regular_file_is_followed_and_kept(tmp_path):
    shared = tmp_path / "shared" / "decisions.json"
    shared.parent.mkdir()
    shared.write_text("")
    link = tmp_path / "stpa.json"
    link.symlink_to(shared)
    cache = stpa_cache.DecisionCache(link)
    assert cache.put("k", ENTRY) == "stored"
    assert link.is_symlink() and os.readlink(link) == str(shared)  # the link survives
    assert "k" in json.loads(shared.read_text())["entries"]  # its target holds the entry
    assert cache.get("k")["report"] == ENTRY["report"]
    assert sorted(p.name for p in shared.parent.iterdir()) == [shared.name]


def test_a_character_device_node_is_a_miss_and_left_alone(tmp_path):
    # A node of the null device's numbers, under tmp_path (needs CAP_MKNOD).
    node = tmp_path / "null"
    devnull = os.stat(os.devnull)
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, devnull.st_rdev)
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    cache = stpa_cache.DecisionCache(node)
    assert cache.get("k") is None
    assert cache.put("k", ENTRY).endswith("is a character device, not a regular file: left alone)")
    assert stat.S_ISCHR(os.lstat(node).st_mode) and os.lstat(node).st_rdev == devnull.st_rdev


def test_the_null_device_is_seen_as_one_without_opening_it():
    # Only stat: the real device is never opened or written by this test.
    assert stpa_cache.not_a_regular_file(Path(os.devnull)) == (
        "is a character device, not a regular file"
    )
    assert stpa_cache.is_null_device(os.devnull)
    assert stpa_cache.is_null_device("/dev/../dev/null")
    assert not stpa_cache.is_null_device("/tmp/stpa.json")


@pytest.mark.parametrize("how", ["path", "symlink"])
def test_dev_null_turns_the_cache_off(monkeypatch, tmp_path, how):
    path = os.devnull
    if how == "symlink":
        path = tmp_path / "to_null"
        path.symlink_to(os.devnull)
    monkeypatch.setenv("SEER_STPA_CACHE", str(path))
    assert stpa_cache.default_path() is None  # nothing is read or written, anywhere
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["cache"]["path"] is None
    assert decision.report["cache"]["status"] == "miss, disabled (SEER_STPA_CACHE=off)"
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
