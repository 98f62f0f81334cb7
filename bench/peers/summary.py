"""From runs to figures: medians, spreads, rates and seer/peer ratios.

A case's figure is its median wall time over the rounds and its committed
events per second at that median (every run of a workload commits the same
events: same model, seed and end time). A ratio is seer's rate / the peer's
rate, so above 1 seer is that many times faster; a latency "x% lower" is
``1 - 1/ratio``. Two comparisons per peer mode: against seer on the same
number of threads (1: the serial executor; 2: the parallel one on 2 threads),
and each engine's best mode against seer's best.
"""

from __future__ import annotations

import statistics

# The paper's PCS figures: environment-execution latency this much lower than
# each engine's (its names: ROSS-T, NBSE (USE's lineage), ROOT-Sim).
PAPER = {
    "ross": ("ROSS-T", 46.9),
    "use": ("NBSE", 19.5),
    "rootsim": ("ROOT-Sim", 64.9),
}


def lower_latency_percent(ratio: float) -> float:
    """A ratio of rates as "x% lower latency": 100 (1 - 1/ratio)."""
    return 100.0 * (1.0 - 1.0 / ratio)


def ratio_of_percent(percent: float) -> float:
    """The inverse: "x% lower latency" as a ratio of rates."""
    return 1.0 / (1.0 - percent / 100.0)


def case_row(name: str, entry: dict) -> dict:
    """Median, min and max wall time, events, rate; None figures when every run failed."""
    samples = entry["samples"]
    first = samples[0] if samples else {}
    row = {
        "case": name,
        "engine": first.get("engine", name.split()[0]),
        "mode": first.get("mode", name.split()[1] if " " in name else ""),
        "threads": first.get("threads"),
        "runs": len(samples),
        "failures": entry["failures"],
        "retries": entry.get("retries", []),
        "wall_s": [s["wall_s"] for s in samples],
        "median_wall_s": None,
        "min_wall_s": None,
        "max_wall_s": None,
        "committed_events": None,
        "events_per_s": None,
        "events_agree": None,
    }
    if not samples:
        return row
    walls = row["wall_s"]
    events = {s["committed_events"] for s in samples}
    median = statistics.median(walls)
    row.update(
        median_wall_s=median,
        min_wall_s=min(walls),
        max_wall_s=max(walls),
        committed_events=int(statistics.median(s["committed_events"] for s in samples)),
        events_agree=len(events) == 1,
    )
    row["events_per_s"] = row["committed_events"] / median if median > 0 else None
    for key in ("blocking_probability", "handoffs", "calls"):
        if key in first:
            row[key] = first[key]
    return row


def seer_reference(rows: list[dict], threads: int) -> dict | None:
    """The seer row a peer on ``threads`` is compared with: serial for 1, else parallel."""
    for row in rows:
        if row["engine"] != "seer" or row["events_per_s"] is None:
            continue
        if threads == 1 and row["mode"] == "serial":
            return row
        if threads > 1 and row["mode"] == "parallel" and row["threads"] == threads:
            return row
    return None


def best(rows: list[dict], engine: str) -> dict | None:
    """The engine's fastest row (highest rate)."""
    mine = [r for r in rows if r["engine"] == engine and r["events_per_s"] is not None]
    return max(mine, key=lambda r: r["events_per_s"]) if mine else None


def ratios(rows: list[dict]) -> list[dict]:
    """The ratios: every peer row against seer on as many threads, then best against best."""
    out = []
    for row in rows:
        if row["engine"] == "seer" or row["events_per_s"] is None:
            continue
        ref = seer_reference(rows, row["threads"])
        if ref is not None:
            out.append(_ratio("same threads", ref, row))
    top = best(rows, "seer")
    for engine in sorted({r["engine"] for r in rows} - {"seer"}):
        peer = best(rows, engine)
        if top is not None and peer is not None:
            out.append(_ratio("best vs best", top, peer))
    return out


def _ratio(kind: str, seer: dict, peer: dict) -> dict:
    ratio = seer["events_per_s"] / peer["events_per_s"]
    return {
        "kind": kind,
        "seer": seer["case"],
        "peer": peer["case"],
        "engine": peer["engine"],
        "ratio": ratio,
        "lower_latency_percent": lower_latency_percent(ratio),
    }


def summarize(results: dict[str, dict]) -> dict:
    """One workload's rows (in case order) and ratios, and whether all engines committed alike."""
    rows = [case_row(name, entry) for name, entry in results.items()]
    counts = {r["committed_events"] for r in rows if r["committed_events"] is not None}
    return {"rows": rows, "ratios": ratios(rows), "same_committed_events": len(counts) <= 1}


def paper_comparison(workloads: list[dict]) -> list[dict]:
    """Per peer named in the paper: its figure, and our best-vs-best ratio on each PCS size."""
    out = []
    for engine, (paper_name, percent) in PAPER.items():
        ours = {}
        for w in workloads:
            if w["model"] != "pcs":
                continue
            for r in w["summary"]["ratios"]:
                if r["kind"] == "best vs best" and r["engine"] == engine:
                    ours[w["size"]] = r["ratio"]
        out.append(
            {
                "engine": engine,
                "paper_name": paper_name,
                "paper_lower_latency_percent": percent,
                "paper_ratio": ratio_of_percent(percent),
                "ours_best_vs_best": ours,
            }
        )
    return out
