"""Writes benchmark results: JSON, a Markdown table, PNG plots."""

from __future__ import annotations

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def add_ratios(rows: list[dict]) -> None:
    """Speed-up of each case vs the group's serial case (serial / case)."""
    serial = next((r for r in rows if r["name"] == "serial"), None)
    for r in rows:
        r["speedup_vs_serial"] = serial["median_ms"] / r["median_ms"] if serial else None


def markdown(results: dict) -> str:
    """One table per group."""
    lines = [
        f"Machine: {results['machine']['cpu_model']}, "
        f"{results['machine']['usable_cpus']} usable CPUs "
        f"(affinity {results['machine']['affinity']}).",
        "",
    ]
    for group in results["groups"]:
        lines += [
            f"### {group['label']}",
            "",
            "| case | median ms | p95 ms | events/s | speed-up vs serial |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in group["rows"]:
            eps = f"{r['events_per_s'] / 1e6:.2f} M" if r.get("events_per_s") else "-"
            sp = f"{r['speedup_vs_serial']:.2f}x" if r.get("speedup_vs_serial") else "-"
            lines.append(
                f"| {r['name']} | {r['median_ms']:.3f} | {r['p95_ms']:.3f} | {eps} | {sp} |"
            )
        lines.append("")
    return "\n".join(lines)


def plot_latency_vs_threads(results: dict, path: str) -> None:
    """Parallel step latency against threads, one line per group, serial dashed."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for group in results["groups"]:
        par = [r for r in group["rows"] if r.get("executor") == "parallel"]
        if not par:
            continue
        (line,) = ax.plot(
            [r["threads"] for r in par],
            [r["median_ms"] for r in par],
            marker="o",
            label=group["label"],
        )
        serial = next((r for r in group["rows"] if r["name"] == "serial"), None)
        if serial:
            ax.axhline(serial["median_ms"], color=line.get_color(), linestyle="--", linewidth=0.8)
    ax.set_xlabel("threads (parallel executor)")
    ax.set_ylabel("median step latency (ms); dashed: serial")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_speedups(results: dict, path: str) -> None:
    """Speed-up vs serial of every case, grouped bars."""
    groups = results["groups"]
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(groups)), 4.5))
    names = sorted({r["name"] for g in groups for r in g["rows"] if r["name"] != "serial"})
    width = 0.8 / max(1, len(names))
    for i, name in enumerate(names):
        xs, ys = [], []
        for j, g in enumerate(groups):
            r = next((r for r in g["rows"] if r["name"] == name), None)
            if r and r.get("speedup_vs_serial"):
                xs.append(j + i * width)
                ys.append(r["speedup_vs_serial"])
        ax.bar(xs, ys, width=width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
    ax.set_xticklabels([g["label"] for g in groups], rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("speed-up vs serial (x)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(results: dict, out_dir: str) -> list[str]:
    """Write every output file; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = [
        os.path.join(out_dir, n)
        for n in ("results.json", "results.md", "latency_vs_threads.png", "speedup.png")
    ]
    with open(paths[0], "w") as f:
        json.dump(results, f, indent=2)
    with open(paths[1], "w") as f:
        f.write(markdown(results))
    plot_latency_vs_threads(results, paths[2])
    plot_speedups(results, paths[3])
    return paths
