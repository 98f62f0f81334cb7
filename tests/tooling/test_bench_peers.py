"""The peer comparison's machinery (bench/peers/) on a fake engine: no engine, no network.

A tiny script stands in for an engine's runner (it prints engine noise and a
PEER line); the tests run the harness's alternation, parsing, checks,
summary and report on it, and the command line's and build scripts' answers
when an engine's checkout or a tool is missing (a message and exit 2, never a
traceback).
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench.peers import agreement, build, engines, harness, intervals, peerline, report, summary
from bench.peers.workloads import Workload

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "bench" / "peers"

FAKE_ENGINE = textwrap.dedent(
    """
    import sys
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:])
    print("engine banner: lots of its own output")
    if opts.get("fail"):
        print("out of events", file=sys.stderr)
        sys.exit(1)
    size = f"{opts['width']}x{opts['height']}" if "width" in opts else opts["entities"]
    model = "pcs" if "width" in opts else "phold"
    print(
        f"PEER engine={opts['engine']} mode={opts['mode']} threads={opts['threads']} "
        f"model={model} size={opts.get('size', size)} end_time={opts['end']} "
        f"seed={opts['seed']} committed_events=1000 wall_s={opts['wall']} "
        "call_attempts=50 blocks=2 busy_lines=10 handoffs=4 dropped_handoffs=1 calls=40 "
        "blocking_probability=0.075"
    )
    print("engine statistics after the line")
    """
)


@pytest.fixture
def fake_engine(tmp_path):
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)

    def make(name: str, modes: tuple, walls: dict, extra: tuple = ()) -> engines.Engine:
        def command(mode, w, bin_dir):
            return [
                sys.executable,
                str(script),
                f"--engine={name}",
                f"--mode={mode.name}",
                f"--threads={mode.threads}",
                f"--wall={walls[(mode.name, mode.threads)]}",
                *extra,
                *w.options(),
            ]

        return engines.Engine(name, name.upper(), f"SEER_PEER_{name.upper()}", modes, command)

    return make


WORKLOAD = Workload("pcs", "16x16", 300.0)


def test_peer_line_parses_types_and_round_trips():
    line = (
        "PEER engine=ross mode=sequential threads=1 model=pcs size=64x64 end_time=3000 seed=0 "
        "committed_events=750123 wall_s=1.25 blocking_probability=0.0192"
    )
    parsed = peerline.parse(line)
    assert parsed["threads"] == 1 and parsed["committed_events"] == 750123
    assert parsed["end_time"] == 3000.0 and parsed["wall_s"] == 1.25
    assert parsed["size"] == "64x64" and parsed["mode"] == "sequential"
    assert peerline.parse(peerline.format_line(parsed)) == parsed
    assert peerline.find("noise\n" + line + "\nmore noise\n")["engine"] == "ross"


@pytest.mark.parametrize(
    "text",
    [
        "no line at all",
        "PEER engine=ross mode=sequential",  # required keys missing
        "PEER engine=ross threads=one mode=x model=pcs size=1 end_time=1 seed=0 "
        "committed_events=1 wall_s=1",  # not a number
        "PEER engine=ross oops",  # not key=value
    ],
)
def test_bad_peer_lines_are_errors(text):
    with pytest.raises(peerline.PeerLineError):
        peerline.find(text)


def test_rounds_alternate_and_parse_a_fake_engine(fake_engine):
    seer = fake_engine("seer", (engines.Mode("serial", 1), engines.Mode("parallel", 2)),
                       {("serial", 1): 0.1, ("parallel", 2): 0.05})  # fmt: skip
    peer = fake_engine("ross", (engines.Mode("sequential", 1), engines.Mode("optimistic", 2)),
                       {("sequential", 1): 0.8, ("optimistic", 2): 0.5})  # fmt: skip
    cases = engines.cases_for(seer, WORKLOAD, None, 2) + engines.cases_for(peer, WORKLOAD, None, 2)
    ran = []

    def run(case, timeout_s):
        ran.append(case.name)
        assert timeout_s == harness.RUN_TIMEOUT_S if len(ran) <= 4 else timeout_s == 30.0
        return harness.run_process(case, timeout_s)

    results = harness.run_rounds(WORKLOAD, cases, 3, run=run)
    names = [c.name for c in cases]
    assert ran == names + names[1:] + names[:1] + names[2:] + names[:2]  # rotated each round
    assert results[names[0]]["order"] == [0, 3, 2]
    for entry in results.values():
        assert entry["failures"] == [] and len(entry["samples"]) == 3
        assert [s["round"] for s in entry["samples"]] == [1, 2, 3]
        assert all(s["process_s"] > 0 for s in entry["samples"])

    s = summary.summarize(results)
    assert s["same_committed_events"]
    rows = {r["case"]: r for r in s["rows"]}
    assert rows["ross sequential x1"]["median_wall_s"] == 0.8
    assert rows["ross sequential x1"]["events_per_s"] == pytest.approx(1000 / 0.8)
    same = {r["peer"]: r for r in s["ratios"] if r["kind"] == "same threads"}
    assert same["ross sequential x1"]["seer"] == "seer serial x1"
    assert same["ross sequential x1"]["ratio"] == pytest.approx(8.0)
    assert same["ross optimistic x2"]["seer"] == "seer parallel x2"
    assert same["ross optimistic x2"]["ratio"] == pytest.approx(10.0)
    (best,) = [r for r in s["ratios"] if r["kind"] == "best vs best"]
    assert (best["seer"], best["peer"]) == ("seer parallel x2", "ross optimistic x2")
    assert best["lower_latency_percent"] == pytest.approx(90.0)


def test_failed_and_wrong_runs_are_recorded_not_fatal(fake_engine):
    good = fake_engine("seer", (engines.Mode("serial", 1),), {("serial", 1): 0.1})
    failing = fake_engine("use", (engines.Mode("optimistic", 1),), {("optimistic", 1): 1.0},
                          extra=("--fail=1",))  # fmt: skip
    lying = fake_engine("rootsim", (engines.Mode("serial", 1),), {("serial", 1): 1.0},
                        extra=("--size=99x99",))  # fmt: skip
    cases = [c for e in (good, failing, lying) for c in engines.cases_for(e, WORKLOAD, None, 1)]
    results = harness.run_rounds(WORKLOAD, cases, 2)
    assert len(results["seer serial x1"]["samples"]) == 2
    (first, _) = results["use optimistic x1"]["failures"]
    assert "exit 1" in first and "out of events" in first
    assert "99x99" in results["rootsim serial x1"]["failures"][0]
    rows = summary.summarize(results)["rows"]
    assert [r["runs"] for r in rows] == [2, 0, 0]
    assert "Failed runs:" in report.workload_table(
        {"label": WORKLOAD.label, "summary": summary.summarize(results)}
    )


def test_report_and_readme_line_from_fake_results(fake_engine):
    seer = fake_engine("seer", (engines.Mode("serial", 1),), {("serial", 1): 0.1})
    ross = fake_engine("ross", (engines.Mode("sequential", 1),), {("sequential", 1): 0.4})
    w = Workload("pcs", "64x64", 3000.0)
    cases = engines.cases_for(seer, w, None, 1) + engines.cases_for(ross, w, None, 1)
    runs = harness.run_rounds(w, cases, 1)
    workloads = [{"label": w.label, "model": "pcs", "size": "64x64", "end_time": 3000.0,
                  "summary": summary.summarize(runs)}]  # fmt: skip
    results = {
        "command": "python -m bench.peers",
        "date": "2026-12-06",
        "rounds": 1,
        "seconds": 1.0,
        "machine": {"usable_threads": 2, "cpu_model": "CPU"},
        "engines": [{"label": "ROSS", "commit": "abc", "describe": "v8.1.1", "build": "Release"}],
        "notes": [],
        "workloads": workloads,
        "paper": summary.paper_comparison(workloads),
    }
    results["readme_line"] = report.readme_line(results)
    assert "4.00x ROSS" in results["readme_line"]
    md = report.markdown(results)
    assert "| ross sequential x1 | 1 | 0.400 |" in md
    assert "4.00x (75.0% lower)" in md  # seer / this, and as seer's latency
    assert "| ross (ROSS-T) | 46.9% (1.88x) | 4.00x (75.0% lower) |" in md
    assert report._ratio_cell(0.5) == "0.50x (100.0% higher)"
    assert summary.ratio_of_percent(summary.lower_latency_percent(3.0)) == pytest.approx(3.0)


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEER_PEER_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def test_no_engine_exits_2_with_a_message_not_a_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bench.peers", "--build-dir", str(tmp_path)],
        env=_clean_env(SEER_PEER_ROSS=str(tmp_path / "missing")),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 2
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out
    assert "missing does not exist" in out  # ROSS: named but absent
    assert "SEER_PEER_USE is not set" in out  # USE: not named
    assert "no peer engine to compare with" in proc.stderr


def test_build_script_names_a_missing_tool(tmp_path):
    checkout = tmp_path / "ROSS"
    (checkout / "core").mkdir(parents=True)
    (checkout / "core" / "ross.h").write_text("")
    tools = tmp_path / "bin"  # a PATH with what the script needs before its tool check
    tools.mkdir()
    for tool in ("dirname", "mkdir"):
        os.symlink(subprocess.check_output(["sh", "-c", f"command -v {tool}"], text=True).strip(),
                   tools / tool)  # fmt: skip
    proc = subprocess.run(
        ["/bin/bash", str(PEERS / "ross" / "build.sh"), str(checkout), str(tmp_path / "out")],
        env={"PATH": str(tools)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "'cmake' not found on PATH" in proc.stderr


def test_prepare_skips_engines_without_a_checkout(tmp_path):
    ready, lines = build.prepare(engines.PEERS, {}, tmp_path, environ={})
    assert ready == []
    assert [ln.split()[0] for ln in lines] == ["ROSS", "ROOT-Sim", "USE"]


def test_intervals_and_agreement_on_synthetic_runs():
    assert intervals.t975(9) == 2.262 and intervals.t975(1e6) == 1.96
    ci = intervals.mean_ci([1.0, 2.0, 3.0, 4.0])
    assert ci["mean"] == 2.5 and ci["high"] - ci["low"] == pytest.approx(2 * 3.182 * 0.6455, 1e-3)
    d = intervals.welch([1.0, 2.0, 3.0], [11.0, 12.0, 13.0])
    assert d["diff"] == -10.0 and d["high"] < 0 and d["df"] == pytest.approx(4.0)

    def run(seed, calls):
        return {"call_attempts": 60, "blocks": 2, "busy_lines": 10, "handoffs": 5 + seed % 3,
                "dropped_handoffs": 1, "calls": calls, "committed_events": 900,
                "blocking_probability": 3 / calls}  # fmt: skip

    seer = [run(s, 50 + s % 4) for s in range(10)]
    independent = [run(s + 1, 50 + (s + 2) % 4) for s in range(10)]
    result = agreement.compare(seer, seer, independent)
    assert result["exact_matches"] == 10
    for m in result["metrics"].values():
        assert m["intervals_overlap"] and m["difference_includes_0"]
    shifted = [dict(s, calls=s["calls"] + 40) for s in independent]
    calls = agreement.compare(seer, shifted, shifted)["metrics"]["calls"]
    assert not calls["difference_includes_0"]


def test_a_hung_run_is_started_again_once(fake_engine):
    seer = fake_engine("seer", (engines.Mode("serial", 1),), {("serial", 1): 0.1})
    (case,) = engines.cases_for(seer, WORKLOAD, None, 1)
    calls = []

    def hangs_first(c, timeout_s):
        calls.append(c.name)
        if len(calls) == 1:
            raise harness.RunTimeout(f"{c.name}: no result after 1 s")
        return harness.run_process(c, timeout_s)

    results = harness.run_rounds(WORKLOAD, [case], 1, run=hangs_first)
    entry = results[case.name]
    assert len(calls) == 2 and len(entry["samples"]) == 1 and entry["failures"] == []
    assert "started again" in entry["retries"][0]

    def always_hangs(c, timeout_s):
        raise harness.RunTimeout(f"{c.name}: no result after 1 s")

    entry = harness.run_rounds(WORKLOAD, [case], 1, run=always_hangs)[case.name]
    assert entry["samples"] == [] and "no result" in entry["failures"][0]
    assert harness.timeout_for([{"process_s": 9.0}]) == 90.0
    assert harness.timeout_for([{"process_s": 100.0}]) == harness.RUN_TIMEOUT_S
