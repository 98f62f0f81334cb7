"""``python -m bench``: run a profile, write JSON, Markdown and PNG plots."""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from bench import callgrind, contention, memory, report
from bench.groups import Group
from bench.regret import regret_table
from bench.suites import SUITES
from bench.timing import run_interleaved, summarize
from seer_env.stpa import hardware


def load() -> tuple[float | None, float | None]:
    """1-minute load average and CPU pressure (PSI some avg10, 0..1), now."""
    try:
        avg = round(os.getloadavg()[0], 2)
    except OSError:
        avg = None
    pressure = hardware.cpu_pressure()
    return avg, None if pressure is None else round(pressure, 3)


def machine_info() -> dict:
    """STPA's machine features plus what a reader needs to judge the noise."""
    info = hardware.machine_features()
    info["affinity"] = hardware.allowed_cpus()
    info["python"] = platform.python_version()
    info["platform"] = platform.platform()
    info["load_start"], info["cpu_pressure_start"] = load()
    return info


def run_group(group: Group, progress: Progress) -> dict:
    """Build a group's cases, time them interleaved, summarize, close them.

    A contention group (``group.quiet_label``) does all of it, the auto case's
    STPA decision included, beside one busy process per usable CPU.
    """
    busy = hardware.usable_threads() if group.quiet_label is not None else 0
    task = progress.add_task(f"{group.label}: building", total=None)
    cases: list = []
    notes: list[str] = []
    steps_per_turn = group.steps_per_turn
    loaded = contention.busy_processes(busy) if busy else contextlib.nullcontext([])
    try:
        with loaded as procs:
            cases, notes = group.build()
            progress.update(task, description=group.label, total=group.rounds * len(cases))
            steps_per_turn = run_interleaved(
                cases,
                warmup_steps=group.warmup_steps,
                rounds=group.rounds,
                steps_per_turn=group.steps_per_turn,
                min_turn_s=group.min_turn_s,
                progress=lambda: progress.advance(task),
            )
            if contention.still_busy(procs) < busy:
                notes.append("a busy process ended before the group did: load not constant")
    finally:
        for case in cases:
            if case.close is not None:
                case.close()
        progress.remove_task(task)
    rows = [summarize(c) for c in cases]
    report.add_ratios(rows)
    if group.derive is not None:
        notes.extend(group.derive(rows))
    result = {
        "workload": group.workload,
        "label": group.label,
        "config": group.config,
        "metric": group.metric,
        "rounds": group.rounds,
        "steps_per_turn": steps_per_turn,
        "rows": rows,
        "notes": notes,
        "targets": report.check_targets(rows, group.targets),
        "ratios": report.report_ratios(rows, group.ratios),
    }
    if group.quiet_label is not None:
        result.update(quiet_label=group.quiet_label, busy_processes=busy)
    return result


def select_groups(profile: str, only: str | None, contention: bool = True) -> list[Group]:
    """The profile's groups whose label contains ``only``, contention groups last (or none).

    Quiet groups first: the load figures taken between them and the
    contention groups must not include the bench's own busy processes (PSI
    avg10 remembers 10 s of them).
    """
    groups = SUITES[profile]()
    if only:
        groups = [g for g in groups if only.lower() in g.label.lower()]
    if not contention:
        groups = [g for g in groups if g.quiet_label is None]
    return sorted(groups, key=lambda g: g.quiet_label is not None)  # stable


def main(argv: list[str] | None = None) -> dict:
    """Run a benchmark profile and write its results."""
    parser = argparse.ArgumentParser(description="seer_env benchmarks")
    parser.add_argument("--profile", choices=sorted(SUITES), default="default")
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--only", default=None, help="run groups whose label contains this text")
    parser.add_argument(
        "--callgrind", action="store_true", help="add instructions/event (needs valgrind)"
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="add RSS per pending event (PCS 128x128, 256x256; on by default in the full profile)",
    )
    parser.add_argument(
        "--no-contention",
        action="store_true",
        help="skip the contention groups (those run beside one busy process per CPU)",
    )
    args = parser.parse_args(argv)
    console = Console()
    groups = select_groups(args.profile, args.only, contention=not args.no_contention)
    results = {"profile": args.profile, "machine": machine_info(), "groups": []}
    results["machine"]["omp_num_threads"] = os.environ.get("OMP_NUM_THREADS")
    m = results["machine"]
    console.print(
        f"[bold]seer_env bench[/] profile={args.profile} on {m['cpu_model']} "
        f"({m['usable_threads']} usable threads, load {m['load_start']})"
    )
    start = time.perf_counter()
    columns = [TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=console, transient=True) as progress:
        for group in groups:
            if group.quiet_label is not None and "load_end" not in m:
                m["load_end"], m["cpu_pressure_end"] = load()
            result = run_group(group, progress)
            results["groups"].append(result)
            rows = result["rows"]
            if not rows:  # every case left out (a missing extra): see the notes
                continue
            best = min(rows, key=lambda r: r["median_ms"])
            speedup = best.get("speedup_vs_serial")
            console.print(
                f"  {group.label}: {rows[0]['name']} {rows[0]['median_ms']:.3f} ms, best "
                f"{best['name']} {best['median_ms']:.3f} ms"
                + ("" if speedup is None else f" ({speedup:.2f}x vs serial)")
            )
    results["regret"] = regret_table(results["groups"])
    results["every_group"] = report.every_group_checks(results["groups"], args.profile)
    results["noise_floor"] = report.noise_floor(results["groups"])
    results["noise_floor_under_load"] = report.noise_floor(results["groups"], under_load=True)
    if args.callgrind:
        with console.status("callgrind: instructions per event"):
            results["callgrind"] = callgrind.run()
    if args.memory or args.profile == "full":
        with console.status("memory: RSS per pending event"):
            results["memory"] = memory.run([128, 256])
    if "load_end" not in m:
        m["load_end"], m["cpu_pressure_end"] = load()
    results["seconds"] = time.perf_counter() - start
    # Raw Markdown, unwrapped: it is meant to be pasted (and rich's tables wrap badly).
    console.print(report.markdown(results), markup=False, highlight=False, soft_wrap=True)
    for path in report.write(results, args.out):
        console.print(f"wrote {path}")
    return results


if __name__ == "__main__":
    # NumPy's BLAS threads (the policy's matmuls) spin after each call and would
    # steal the runtime's cores. BLAS reads the variable when NumPy loads, which
    # has happened by now (seer_env imports it): set it and start over once.
    if os.environ.get("OMP_NUM_THREADS") != "1":
        os.environ["OMP_NUM_THREADS"] = "1"
        os.execv(sys.executable, [sys.executable, "-m", "bench", *sys.argv[1:]])
    main()
