"""The benchmark's PNG plots: latency vs threads, speed-up vs entities, alternative ratios."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BASELINES = ("reference", "async-vec", "supersuit")
# Config keys that distinguish series of the same workload (not the size).
SWEPT = ("move_interval", "work", "remote", "phones_per_cell", "lookahead")


def entities(group: dict) -> int:
    """Entities of a group's env: cells, UAVs or PHOLD entities."""
    c = group["config"]
    if "width" in c:
        return c["width"] * c["height"]
    return c.get("num_uavs") or c.get("num_entities") or 0


def _save(fig, path: str) -> None:
    """Lay out, write and close a figure (every plot here ends this way)."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def latency_vs_threads(results: dict, path: str) -> None:
    """Parallel step latency against threads, one line per group, serial dashed."""
    fig, ax = plt.subplots(figsize=(9, 5.5))
    counts = set()
    for group in results["groups"]:
        par = [r for r in group["rows"] if r.get("kind") == "executor"]
        par = [r for r in par if r["executor"] == "parallel"]
        if not par or group["workload"] == "contention":  # one count, in their own table
            continue
        counts.update(r["threads"] for r in par)
        (line,) = ax.plot(
            [r["threads"] for r in par],
            [r["median_ms"] for r in par],
            marker="o",
            label=group["label"],
        )
        serial = next((r for r in group["rows"] if r["name"] == "serial"), None)
        if serial:
            ax.axhline(serial["median_ms"], color=line.get_color(), linestyle="--", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(counts), [str(c) for c in sorted(counts)])
    ax.set_xlabel("threads (parallel executor)")
    ax.set_ylabel("median step latency (ms); dashed: serial")
    ax.set_yscale("log")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, path)


def speedup_vs_entities(results: dict, path: str) -> None:
    """Speed-up vs serial of parallel at the most threads, against env size, per workload."""
    fig, ax = plt.subplots(figsize=(9, 5))
    series: dict[str, list[tuple[int, float]]] = {}
    for group in results["groups"]:
        if group["workload"] in ("stpa", "contention"):
            continue  # STPA's sweep and the loaded runs: reported in their own tables
        par = [r for r in group["rows"] if r.get("kind") == "executor"]
        par = [r for r in par if r["executor"] == "parallel" and r.get("speedup_vs_serial")]
        if par:
            top = max(par, key=lambda r: r["threads"])
            swept = [f"{k}={v:g}" for k, v in sorted(group["config"].items()) if k in SWEPT]
            key = " ".join([group["workload"], f"x{top['threads']}", *swept])
            series.setdefault(key, []).append((entities(group), top["speedup_vs_serial"]))
    for key, points in sorted(series.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=key)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("entities (cells, UAVs, PHOLD entities)")
    ax.set_ylabel("parallel speed-up vs serial (x), most threads")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, path)


def alternative_ratios(results: dict, path: str) -> None:
    """How many times faster serial and auto (the default) are than each alternative."""
    groups = [g for g in results["groups"] if any(r["name"] in BASELINES for r in g["rows"])]
    fig, ax = plt.subplots(figsize=(max(7, 1.8 * len(groups)), 5))
    bars = [(who, b) for who in ("serial", "auto") for b in BASELINES]
    width = 0.8 / len(bars)
    for i, (who, base) in enumerate(bars):
        xs, ys = [], []
        for j, g in enumerate(groups):
            row = next((r for r in g["rows"] if r["name"] == who), None)
            if row and row.get(f"vs_{base}"):
                xs.append(j + i * width)
                ys.append(row[f"vs_{base}"])
        ax.bar(xs, ys, width=width, label=f"{who} vs {base}", hatch="//" if who == "serial" else "")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
    ax.set_xticklabels([g["label"] for g in groups], rotation=15, ha="right", fontsize=7)
    ax.set_ylabel("alternative latency / case latency (x, log)")
    ax.legend(fontsize=7, ncol=2)
    _save(fig, path)


def write_all(results: dict, out_dir: str) -> list[str]:
    """Every plot, as PNG files in ``out_dir``; returns their paths."""
    paths = []
    for name, plot in (
        ("latency_vs_threads.png", latency_vs_threads),
        ("speedup_vs_entities.png", speedup_vs_entities),
        ("alternative_ratios.png", alternative_ratios),
    ):
        paths.append(os.path.join(out_dir, name))
        plot(results, paths[-1])
    return paths
