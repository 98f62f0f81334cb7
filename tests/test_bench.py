"""The benchmark machinery on its smoke profile: files written and well-formed (no timing)."""

import json

import pytest

from seer_env.bench import __main__ as bench
from seer_env.bench import report
from seer_env.bench.groups import Target
from seer_env.bench.regret import regret_row

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
    assert {"pcs", "aircraft", "phold", "stpa"} <= workloads
    for group in data["groups"]:
        names = [r["name"] for r in group["rows"]]
        assert names[0] == "serial" and "auto" in names
        for row in group["rows"]:
            assert row["median_ms"] > 0 and row["p95_ms"] >= row["median_ms"]
            assert row["speedup_vs_serial"] > 0
    pcs = next(g for g in data["groups"] if g["workload"] == "pcs")
    names = {r["name"] for r in pcs["rows"]}
    assert {"parallel-1", "reference", "async-vec"} <= names
    vs_reference = next(t for t in pcs["targets"] if t["baseline"] == "reference")
    assert vs_reference["ratio"] > 0 and vs_reference["met"] in (True, False)
    aircraft = next(g for g in data["groups"] if g["workload"] == "aircraft")
    for row in aircraft["rows"]:  # inference latency split into policy and env
        assert row["policy_median_ms"] > 0 and row["env_median_ms"] > 0
    assert len(data["regret"]) == len(data["groups"])
    md = (tmp_path / "results.md").read_text()
    assert md == report.markdown(results)
    for group in data["groups"]:
        assert f"### {group['label']}" in md
    assert "STPA regret" in md
    for name in ("latency_vs_threads.png", "speedup_vs_entities.png", "baseline_ratios.png"):
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


def test_regret_uses_only_serial_and_parallel_as_fixed_choices():
    r = rows(serial=10.0, **{"parallel-1": 8.0, "parallel-2": 4.0, "locked-2": 1.0})
    r.append({"name": "auto", "median_ms": 5.0, "kind": "auto", "choice": "parallel-2"})
    line = regret_row({"label": "g", "rows": r})
    assert line["best"] == "parallel-2"
    assert line["regret"] == pytest.approx(0.25)
    assert line["choice_regret"] == 0.0
    assert line["vs_serial"] == pytest.approx(-0.5)
