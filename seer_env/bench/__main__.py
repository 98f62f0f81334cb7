"""``python -m seer_env.bench [--profile default|full] [--out DIR]``."""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.progress import Progress

from seer_env.bench import report
from seer_env.bench.machine import machine_info
from seer_env.bench.suites import SUITES
from seer_env.bench.timing import run_interleaved, summarize


def main(argv: list[str] | None = None) -> dict:
    """Run a benchmark profile and write its results."""
    parser = argparse.ArgumentParser(description="seer_env benchmarks")
    parser.add_argument("--profile", choices=sorted(SUITES), default="default")
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--only", default=None, help="run groups whose label contains this text")
    args = parser.parse_args(argv)
    console = Console()
    groups = SUITES[args.profile]()
    if args.only:
        groups = [g for g in groups if args.only.lower() in g.label.lower()]
    results = {"profile": args.profile, "machine": machine_info(), "groups": []}
    console.print(
        f"[bold]seer_env bench[/] profile={args.profile} on {results['machine']['cpu_model']}"
        f" ({results['machine']['usable_cpus']} usable CPUs)"
    )
    start = time.perf_counter()
    with Progress(console=console, transient=True) as progress:
        for group in groups:
            cases = group.build()
            task = progress.add_task(group.label, total=group.rounds * len(cases))
            run_interleaved(
                cases,
                warmup_steps=group.warmup_steps,
                rounds=group.rounds,
                steps_per_turn=group.steps_per_turn,
                progress=lambda task=task: progress.advance(task),
            )
            rows = [summarize(c) for c in cases]
            report.add_ratios(rows)
            results["groups"].append(
                {
                    "workload": group.workload,
                    "label": group.label,
                    "config": group.config,
                    "rows": rows,
                }
            )
            progress.remove_task(task)
            best = min(rows, key=lambda r: r["median_ms"])
            console.print(
                f"  {group.label}: serial {rows[0]['median_ms']:.3f} ms, best {best['name']} "
                f"{best['median_ms']:.3f} ms ({best['speedup_vs_serial']:.2f}x)"
            )
            del cases
    results["seconds"] = time.perf_counter() - start
    for path in report.write(results, args.out):
        console.print(f"wrote {path}")
    console.print(report.markdown(results))
    return results


if __name__ == "__main__":
    main()
