"""The decision cache file (``seer_env.stpa.cache``): where it lives, and it never raises.

(A path that is not a regular file: tests/stpa/test_cache_paths.py.)
"""

import json

import pytest
from stpa_machine import PCS, PHOLD

from seer_env import stpa
from seer_env.envs import pcs_v0
from seer_env.stpa import cache as stpa_cache

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def test_default_cache_path_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("SEER_STPA_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert stpa_cache.default_path() == tmp_path / "seer_env" / "stpa.json"


@pytest.mark.parametrize("value", ["off", "0", "none", "", "OFF", "false"])
def test_cache_disabling_values(monkeypatch, value):
    monkeypatch.setenv("SEER_STPA_CACHE", value)
    assert stpa_cache.default_path() is None


def test_no_home_directory_disables_the_cache(monkeypatch, machine):
    monkeypatch.delenv("SEER_STPA_CACHE")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(stpa_cache.Path, "home", staticmethod(no_home))
    assert stpa_cache.default_path() is None
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["cache"]["path"] is None
    assert decision.report["cache"]["outcome"] == "not stored"


@pytest.mark.parametrize("garbage", ["{not json", "[]", '{"format": 1, "entries": 7}', "\x00\xff"])
def test_corrupt_cache_is_tolerated_and_rewritten(machine, preflights, isolated, garbage):
    isolated.write_text(garbage)
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["source"] == "preflight"
    assert json.loads(isolated.read_text())["format"] == stpa_cache.FORMAT


def test_unwritable_cache_is_tolerated(monkeypatch, machine, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("SEER_STPA_CACHE", str(blocker / "stpa.json"))  # parent is a file
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["cache"]["status"].startswith("miss, not stored")


def test_path_with_nul_byte_is_a_skipped_store():
    cache = stpa_cache.DecisionCache(stpa_cache.Path("/tmp/a\x00b/stpa.json"))
    assert cache.get("k") is None
    assert cache.put("k", _entry()).startswith("not stored (ValueError")


# -- malformed and oversized files -----------------------------------------------------------------


def _entry(**overrides):
    entry = {
        "identity": {"model": "x"},
        "report": {"choice": {"executor": "serial", "num_threads": 1}},
        "stored_at": 1.0,
    }
    entry.update(overrides)
    return entry


@pytest.mark.parametrize(
    "text",
    [
        '{"format": 1, "entries": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"format": 1, "entries": {"k": ' + '{"a": ' * 50_000 + "1" + "}" * 50_001 + "}",
    ],
    ids=["deep-entries", "deep-entry"],
)
def test_deeply_nested_cache_file_does_not_escape_reset(machine, isolated, text):
    isolated.write_text(text)
    env = pcs_v0.parallel_env(**PCS, executor=None, num_threads="auto")
    env.reset(seed=0)
    assert env.runtime.stpa["source"] == "preflight"
    assert json.loads(isolated.read_text())["format"] == stpa_cache.FORMAT


def test_many_malformed_entries_do_not_escape_reset(machine, isolated):
    shapes = [7, None, "x", [1, 2], {}, {"stored_at": "yesterday"}, {"stored_at": [1]}]
    shapes += [_entry(stored_at="now"), _entry(stored_at=float("nan")), _entry(report=[])]
    shapes += [_entry(report={"choice": {"executor": "serial", "num_threads": 1e400}})]
    shapes += [_entry(report={"choice": {"executor": 3, "num_threads": 1}}), _entry(identity=1)]
    shapes += [_entry(provisional="yes"), _entry(stored_at=True)]
    entries = {f"bad{i}": shapes[i % len(shapes)] for i in range(300)}
    entries["good"] = _entry(stored_at=2.0)
    isolated.write_text(json.dumps({"format": 1, "entries": entries}))
    env = pcs_v0.parallel_env(**PCS, executor=None, num_threads="auto")
    env.reset(seed=0)
    assert env.runtime.stpa["cache"]["outcome"] == "stored"
    kept = json.loads(isolated.read_text())["entries"]
    assert "good" in kept and len(kept) == 2  # every malformed entry dropped


def test_cached_entry_with_an_infinite_thread_count_is_a_miss(machine, preflights, isolated):
    stpa.choose("phold", PHOLD)
    text = isolated.read_text()
    data = json.loads(text)
    (key,) = data["entries"]
    data["entries"][key]["report"]["choice"]["num_threads"] = 1e400  # json writes Infinity
    isolated.write_text(json.dumps(data))
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["source"] == "preflight" and len(preflights) == 2


def test_cache_stores_among_256_valid_entries_of_mixed_age(machine, isolated):
    entries = {f"k{i}": _entry(stored_at=float(i)) for i in range(300)}
    entries["k5"]["stored_at"] = 5  # an int timestamp is fine
    isolated.write_text(json.dumps({"format": 1, "entries": entries}))
    decision = stpa.choose("phold", PHOLD)
    assert decision.report["cache"]["outcome"] == "stored"
    kept = json.loads(isolated.read_text())["entries"]
    assert len(kept) == stpa_cache.MAX_ENTRIES and "k0" not in kept and "k299" in kept


def test_cache_file_too_large_is_ignored(monkeypatch, machine, isolated):
    monkeypatch.setattr(stpa_cache, "MAX_FILE_BYTES", 100)
    stpa.choose("phold", PHOLD)
    assert isolated.stat().st_size > 100
    assert stpa_cache.DecisionCache(isolated).get("anything") is None
    assert stpa_cache.DecisionCache(isolated)._load_all() == {}


def test_entry_check_refuses_deep_infinite_and_bool_fields():
    assert stpa_cache.valid_entry(_entry())
    assert stpa_cache.valid_entry(_entry(provisional=True))
    deep: dict = {}
    node = deep
    for _ in range(stpa_cache.MAX_DEPTH + 2):
        node["x"] = {}
        node = node["x"]
    assert not stpa_cache.valid_entry(_entry(identity=deep))
    assert not stpa_cache.valid_entry(_entry(stored_at=float("inf")))
    assert not stpa_cache.valid_entry(
        _entry(report={"choice": {"executor": "s", "num_threads": True}})
    )
