"""``python -m bench.peers.agreement``: do the engines' PCS runs and seer's agree?

Two checks on PCS (default 32x32 to 3000 minutes, 10 seeds), for each peer
mode against seer's serial executor:

- **Same seeds**: our runners draw from seer's own Philox streams in seer's
  order (bench/peers/common/philox.h), so an engine that hands each cell its
  events in time order reproduces seer's run exactly: the count of seeds whose
  counters (attempts, blocks, busy lines, handoffs, drops, events) all equal
  seer's.
- **Independent seeds** (the peer on seeds 1000.., seer on 0..): blocking
  probability, handoffs per call and calls per run, the mean and 95% interval
  on each side and the 95% interval of the difference (Welch): the usual
  statistical test that two simulators run the same model.

Writes agreement.json and agreement.md (default: the ``peers`` folder of bench/results).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

from bench.peers import build, engines, harness, peerline
from bench.peers.engines import ROOT
from bench.peers.harness import run_env
from bench.peers.intervals import mean_ci, overlap, welch
from bench.peers.workloads import Workload

COUNTERS = ("call_attempts", "blocks", "busy_lines", "handoffs", "dropped_handoffs")
METRICS = {
    "blocking_probability": lambda s: s["blocking_probability"],
    "handoffs_per_call": lambda s: s["handoffs"] / s["calls"],
    "calls": lambda s: float(s["calls"]),
}
INDEPENDENT_OFFSET = 1000


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(
        prog="python -m bench.peers.agreement", description=__doc__.splitlines()[0]
    )
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--width", type=int, default=32, help="PCS width = height")
    p.add_argument("--end", type=float, default=3000.0)
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "peers")
    p.add_argument("--build-dir", type=Path, default=ROOT / "build" / "peers")
    for e in engines.PEERS:
        p.add_argument(f"--{e.name}", metavar="CHECKOUT", help=f"default: ${e.env_var}")
    return p.parse_args(argv)


def run_seeds(
    case_of: dict, workload: Workload, seeds: range, retries: list, progress=print
) -> dict[str, list[dict]]:
    """Each case on each seed: the PEER lines, per case name (hung runs retried, noted)."""
    out: dict[str, list[dict]] = {}
    for seed in seeds:
        w = dataclasses.replace(workload, seed=seed)
        for name, make in case_of.items():
            case = make(w)
            limit = harness.timeout_for(out.get(name, []))
            sample = harness.run_checked(case, w, retries=retries, timeout_s=limit)
            out.setdefault(name, []).append(sample)
        progress(f"  seed {seed}: done")
    return out


def compare(seer: list[dict], same: list[dict], independent: list[dict]) -> dict:
    """Exact matches on the same seeds; intervals on independent seeds."""
    key = (*COUNTERS, "committed_events")
    exact = sum(all(a[k] == b[k] for k in key) for a, b in zip(seer, same, strict=True))
    metrics = {}
    for name, value in METRICS.items():
        a = [value(s) for s in seer]
        b = [value(s) for s in independent]
        ci_a, ci_b, diff = mean_ci(a), mean_ci(b), welch(b, a)
        metrics[name] = {
            "seer": ci_a,
            "peer": ci_b,
            "difference": diff,
            "intervals_overlap": overlap(ci_a, ci_b),
            "difference_includes_0": diff["low"] <= 0.0 <= diff["high"],
        }
    return {"seeds": len(seer), "exact_matches": exact, "metrics": metrics}


def markdown(result: dict) -> str:
    """The agreement tables."""
    w = result["workload"]
    lines = [
        f"PCS {w['size']} to {w['end_time']:g} minutes, {result['seeds']} seeds; seer: serial "
        f"executor. Same seeds: runs whose counters all equal seer's. Independent seeds: "
        f"the peer on seeds {INDEPENDENT_OFFSET}.., mean [95% interval]; difference = "
        "peer - seer, 95% Welch interval.",
        "",
        "| engine mode | same seeds: exact | blocking probability, peer | difference "
        "| handoffs per call, peer | difference | calls per run, peer | difference |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    seer_row = "| seer serial x1 (reference) | - |"
    first = next(iter(result["engines"].values()), None)
    if first is not None:
        for name in METRICS:
            s = first["metrics"][name]["seer"]
            seer_row += f" {_ci(s, name)} | - |"
        lines.append(seer_row)
    for case, r in result["engines"].items():
        row = f"| {case} | {r['exact_matches']}/{r['seeds']} |"
        for name in METRICS:
            m = r["metrics"][name]
            d = m["difference"]
            ok = "" if m["difference_includes_0"] else " (excludes 0)"
            row += f" {_ci(m['peer'], name)} | {_fmt(d['diff'], name)} "
            row += f"[{_fmt(d['low'], name)}, {_fmt(d['high'], name)}]{ok} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def _fmt(x: float, metric: str) -> str:
    return f"{x:,.0f}" if metric == "calls" else f"{x:.5f}"


def _ci(c: dict, metric: str) -> str:
    return f"{_fmt(c['mean'], metric)} [{_fmt(c['low'], metric)}, {_fmt(c['high'], metric)}]"


def main(argv: list[str] | None = None) -> int:
    """Run the seeds, compare, write; exit 2 when no peer engine is there."""
    args = parse_args(argv)
    overrides = {e.name: getattr(args, e.name) for e in engines.PEERS if getattr(args, e.name)}
    ready, lines = build.prepare(engines.PEERS, overrides, args.build_dir)
    for line in lines:
        print(line, flush=True)
    if not ready:
        print("agreement: no peer engine (see bench/peers/README.md)", file=sys.stderr)
        return 2
    env = run_env()
    base = Workload("pcs", f"{args.width}x{args.width}", args.end)
    seer_mode = engines.SEER.modes[0]

    scratch = tempfile.TemporaryDirectory(prefix="seer-peers-")

    def maker(engine: engines.Engine, mode: engines.Mode, bin_dir: Path | None):
        def make(w: Workload) -> engines.PeerCase:
            command = engine.command(mode, w, bin_dir)
            return engines.PeerCase(
                engine.name, mode.name, mode.threads, command, env, scratch.name
            )

        return make

    peers = {
        f"{b.engine.name} {m.name} x{m.threads}": maker(b.engine, m, b.bin_dir)
        for b in ready
        for m in b.engine.modes
        if "pcs" in m.models
    }
    print(f"same seeds 0..{args.seeds - 1}: seer and {len(peers)} peer modes", flush=True)
    seer_case = {"seer serial x1": maker(engines.SEER, seer_mode, None)}
    seeds = range(INDEPENDENT_OFFSET, INDEPENDENT_OFFSET + args.seeds)
    retries: list[str] = []
    try:
        same = run_seeds({**seer_case, **peers}, base, range(args.seeds), retries)
        print(f"independent seeds {INDEPENDENT_OFFSET}..", flush=True)
        independent = run_seeds(peers, base, seeds, retries)
    except (harness.RunError, peerline.PeerLineError) as exc:
        print(f"agreement: a run failed: {exc}", file=sys.stderr)
        return 1
    result = {
        "workload": {"model": "pcs", "size": base.size, "end_time": base.end_time},
        "seeds": args.seeds,
        "seer": same["seer serial x1"],
        "engines": {
            name: compare(same["seer serial x1"], same[name], independent[name]) for name in peers
        },
        "runs": {"same": same, "independent": independent},
        "retries": retries,
    }
    text = markdown(result)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "agreement.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "agreement.md").write_text(text)
    print(f"wrote {args.out / 'agreement.json'}, {args.out / 'agreement.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
