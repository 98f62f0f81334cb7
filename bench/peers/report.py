"""The peer comparison's output: results.json, results.md and the README's one line.

The Markdown is what docs/peers.md shows: the machine, the command, each
engine's commit and build, then per workload every case's median and spread,
the seer/peer ratios, and our figures beside the paper's three percentages.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.peers.summary import lower_latency_percent

# The README's line quotes this workload (the project's PCS target size).
README_WORKLOAD = ("pcs", "64x64")


def _num(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def _ratio_cell(ratio: float | None) -> str:
    """``4.00x (75.0% lower)``: seer's rate over the peer's, and seer's latency beside it."""
    if ratio is None:
        return "-"
    percent = lower_latency_percent(ratio)
    side = "lower" if percent >= 0 else "higher"
    return f"{ratio:.2f}x ({abs(percent):.1f}% {side})"


def workload_table(w: dict) -> list[str]:
    """One workload's rows: median, spread, rate, seer/this at the same threads."""
    summary = w["summary"]
    same = {r["peer"]: r["ratio"] for r in summary["ratios"] if r["kind"] == "same threads"}
    events = {r["committed_events"] for r in summary["rows"] if r["committed_events"]}
    agree = "every run commits" if summary["same_committed_events"] else "runs DIFFER:"
    count = ", ".join(f"{e:,}" for e in sorted(events)) or "-"
    lines = [
        f"### {w['label']}",
        "",
        f"{agree} {count} events.",
        "",
        "| case | runs | median wall (s) | min-max (s) | committed events/s | seer / this, "
        "same threads |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in summary["rows"]:
        spread = "-" if r["min_wall_s"] is None else f"{r['min_wall_s']:.3f}-{r['max_wall_s']:.3f}"
        lines.append(
            f"| {r['case']} | {r['runs']} | {_num(r['median_wall_s'], '.3f')} | {spread} | "
            f"{_num(r['events_per_s'], ',.0f')} | "
            f"{'-' if r['engine'] == 'seer' else _ratio_cell(same.get(r['case']))} |"
        )
    best = [r for r in summary["ratios"] if r["kind"] == "best vs best"]
    if best:
        lines += [
            "",
            "Best mode against best mode: "
            + "; ".join(f"{r['seer']} / {r['peer']} {_ratio_cell(r['ratio'])}" for r in best)
            + ".",
        ]
    failures = [f for r in summary["rows"] for f in r["failures"]]
    if failures:
        lines += ["", "Failed runs:", ""] + [f"- {f}" for f in failures]
    retries = [t for r in summary["rows"] for t in r.get("retries", [])]
    if retries:
        lines += ["", "Runs started again after a hang:", ""] + [f"- {t}" for t in retries]
    return lines + [""]


def paper_table(paper: list[dict], sizes: list[str]) -> list[str]:
    """The paper's percentages beside ours (best vs best) on each PCS size."""
    lines = [
        "| engine (paper's name) | paper: lower latency (ratio) | "
        + " | ".join(f"ours, PCS {s}" for s in sizes)
        + " |",
        "|---|---:|" + "---:|" * len(sizes),
    ]
    for p in paper:
        cells = [_ratio_cell(p["ours_best_vs_best"].get(s)) for s in sizes]
        lines.append(
            f"| {p['engine']} ({p['paper_name']}) | {p['paper_lower_latency_percent']:.1f}% "
            f"({p['paper_ratio']:.2f}x) | " + " | ".join(cells) + " |"
        )
    return lines


def readme_line(results: dict) -> str | None:
    """The README's one-line claim, from the PCS 64x64 best-vs-best ratios (None: not run)."""
    model, size = README_WORKLOAD
    w = next((w for w in results["workloads"] if (w["model"], w["size"]) == (model, size)), None)
    if w is None:
        return None
    best = {r["engine"]: r["ratio"] for r in w["summary"]["ratios"] if r["kind"] == "best vs best"}
    labels = {"ross": "ROSS", "rootsim": "ROOT-Sim", "use": "USE"}
    parts = [f"{best[e]:.2f}x {labels[e]}" for e in ("ross", "rootsim", "use") if e in best]
    if not parts:
        return None
    threads = results["machine"].get("usable_threads")
    return (
        f"PCS {size} to {w['end_time']:g} simulated minutes, each engine's best mode on "
        f"{threads} CPUs: seer commits events {', '.join(parts)} as fast "
        f"(`make bench-peers`, {results['date']}; [peers](docs/peers.md))."
    )


def markdown(results: dict) -> str:
    """The whole report."""
    m = results["machine"]
    lines = [
        f"## seer_env and PDES engines: `{results['command']}`",
        "",
        f"{results['date']}, {m.get('cpu_model')} ({m.get('usable_threads')} usable threads), "
        f"load {m.get('load_start')} -> {m.get('load_end')}, CPU pressure "
        f"{m.get('cpu_pressure_start')} -> {m.get('cpu_pressure_end')}; "
        f"{results['rounds']} rounds, each case once per round, the order rotated every round; "
        f"{results['seconds']:.0f} s in all.",
        "",
        "| engine | commit | build |",
        "|---|---|---|",
    ]
    for e in results["engines"]:
        lines.append(
            f"| {e['label']} | {e.get('describe', '-')} `{e.get('commit', '-')}` | "
            f"{e.get('build', '-')} |"
        )
    if results["notes"]:
        lines += [""] + [f"- {n}" for n in results["notes"]]
    lines.append("")
    for w in results["workloads"]:
        lines += workload_table(w)
    sizes = [w["size"] for w in results["workloads"] if w["model"] == "pcs"]
    if sizes:
        lines += ["### Against the paper (PCS, best mode against best mode)", ""]
        lines += paper_table(results["paper"], sizes) + [""]
    if results.get("readme_line"):
        lines += ["README line:", "", results["readme_line"], ""]
    return "\n".join(lines)


def write(results: dict, out: Path) -> list[Path]:
    """results.json and results.md in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.json", out / "results.md"]
    paths[0].write_text(json.dumps(results, indent=2) + "\n")
    paths[1].write_text(markdown(results) + "\n")
    return paths
