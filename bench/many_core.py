"""The many-core table: serial, parallel-1..16 and barrier-16 on a machine with many cores.

One prepared run for a lent machine (16 cores, under 10 minutes): it builds
the C++ driver ``cpp/bench/scaling_steps.cpp`` with the system ``g++``
(Release, into ``--build-dir``), then runs every case of every workload in
its own process, interleaved: in each round every workload's cases run once,
in an order that rotates from round to round, so that a slow minute of the
machine hits every case alike. A case's figure is the median over rounds of
its runs' median step times. Every case of a workload must end in the same
digest (byte equality across executors and thread counts). Prints a Markdown
table and the targets, and writes the rows as JSON (``--out``).

    python -m bench.many_core                     # the table (16 threads at most)
    python -m bench.many_core --rounds 3 --threads 1 2 4
    python -m bench.many_core --model             # the modeled table (below), here

``--model`` measures serial, the parallel executor's rounds on one thread
(``rounds1``) and barrier-1 on this machine (one core each: robust on a
small, shared machine) and extrapolates to 2..16 threads from the work
counters (``Simulation.last_step``: rounds R, ready entity visits V, events
E and cross-entity events X per step, the same on every thread count),
docs/benchmarks.md "Many cores":

    T(p) = (T1 - R * sync(1)) / p * imbalance(p) + R * sync(p) + X * (1 - 1/p) * CROSS_S
    sync(p) = 2 * barrier(p) + SYNC_EXTRA_S,  barrier(p) from stpa.cost_model
    parallel: imbalance(p) = 1 + 1 / (V / R / p)          (stealing: one visit)
    barrier:  imbalance(p) = 1 + sqrt(2 ln p / (E / R / p)) (static slices)

with T1 the measured one-thread step of that executor (a pool of one runs
the serial loop: parallel-1 is serial).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIVER = "scaling_steps"
# A round beyond its two barriers (the cost model's figures): listing,
# sealing and probing the other lists.
SYNC_EXTRA_S = 1.0e-6
# A cross-entity event handled on another core than its sender's: its node
# moves between cores. Calibrated on the 16-core Xeon run of 2026-11-30
# (docs/benchmark-results.md): what its parallel-16 steps took beyond the
# work, barriers and per-round scans of this model came to 0.036-0.067 us
# per such event (PCS 64x64, 128x128, PHOLD 16384 work 400).
CROSS_S = 0.05e-6


@dataclasses.dataclass(frozen=True)
class Workload:
    """One row group: a model, its config, and the steps each run times."""

    label: str
    model: str
    config: dict
    steps: int
    warmup: int = 3


WORKLOADS = (
    Workload(
        "PCS 64x64, moves every 450 min",
        "pcs",
        {"width": 64, "height": 64, "move_interval": 450},
        20,
    ),
    Workload(
        "PCS 128x128, moves every 450 min",
        "pcs",
        {"width": 128, "height": 128, "move_interval": 450},
        8,
    ),
    Workload("PHOLD 16384, work 400", "phold", {"num_entities": 16384, "work": 400}, 20),
    Workload("PHOLD 65536, work 400", "phold", {"num_entities": 65536, "work": 400}, 8),
)

# (workload label, case, versus, at least): case / versus speed, from the issue.
TARGETS = (
    ("PCS 128x128, moves every 450 min", "parallel-16", "serial-1", 12.0),
    ("PCS 64x64, moves every 450 min", "parallel-16", "barrier-16", 1.0),
)


def cases(threads: list[int], barrier: list[int]) -> list[tuple[str, int]]:
    """(executor, threads) of every case: serial, parallel at each count, barrier."""
    return [("serial", 1)] + [("parallel", t) for t in threads] + [("barrier", t) for t in barrier]


def case_name(executor: str, threads: int) -> str:
    """``parallel-16``."""
    return f"{executor}-{threads}"


def build(build_dir: Path, jobs: int) -> Path:
    """Configures and builds the driver with the system g++ (Release); its path."""
    gxx = shutil.which("g++")
    if gxx is None:
        raise SystemExit("g++ not found: the many-core table is built with the system g++")
    configure = [
        "cmake",
        "-S",
        str(ROOT),
        "-B",
        str(build_dir),
        "-DCMAKE_BUILD_TYPE=Release",
        "-DSEER_BUILD_TESTS=ON",
        f"-DCMAKE_CXX_COMPILER={gxx}",
    ]
    subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        ["cmake", "--build", str(build_dir), "--target", DRIVER, f"-j{jobs}"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return build_dir / DRIVER


def run_case(driver: Path, w: Workload, executor: str, threads: int, timeout: float) -> dict:
    """One process: ``w`` on ``executor`` x ``threads``; the driver's JSON line."""
    args = [str(driver), w.model, executor, str(threads), str(w.steps), str(w.warmup)]
    args += [f"{k}={v}" for k, v in w.config.items()]
    out = subprocess.run(args, check=True, capture_output=True, text=True, timeout=timeout)
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine() -> dict:
    """What the table was measured on."""
    model = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gxx = shutil.which("g++")
    version = ""
    if gxx:
        version = subprocess.run([gxx, "--version"], capture_output=True, text=True).stdout
        version = version.splitlines()[0] if version else ""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": model,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable,
        "gxx": version,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def measure(
    driver: Path,
    workloads: tuple[Workload, ...],
    all_cases: list[tuple[str, int]],
    rounds: int,
    time_limit_s: float,
) -> tuple[dict, int]:
    """Every case of every workload, interleaved over ``rounds``; runs and rounds done.

    Stops starting rounds once another would end past ``time_limit_s`` (at
    least one round runs).
    """
    runs: dict[str, dict[str, list[dict]]] = {w.label: {} for w in workloads}
    start = time.perf_counter()
    done = 0
    for r in range(rounds):
        round_start = time.perf_counter()
        for w in workloads:
            k = r % len(all_cases)
            for executor, threads in all_cases[k:] + all_cases[:k]:
                row = run_case(driver, w, executor, threads, timeout=time_limit_s)
                runs[w.label].setdefault(case_name(executor, threads), []).append(row)
        done += 1
        took = time.perf_counter() - round_start
        elapsed = time.perf_counter() - start
        print(f"round {done}/{rounds}: {took:.1f} s", file=sys.stderr)
        if elapsed + took > time_limit_s:
            break
    return runs, done


def summarize(runs: dict[str, dict[str, list[dict]]]) -> dict:
    """Per workload and case: median of the runs' medians, spread, counters, vs serial."""
    table = {}
    for label, by_case in runs.items():
        rows = {}
        digests = {row["digest"] for case_runs in by_case.values() for row in case_runs}
        for name, case_runs in by_case.items():
            medians = [row["median_ms"] for row in case_runs]
            last = case_runs[-1]
            rows[name] = {
                "median_ms": statistics.median(medians),
                "min_ms": min(medians),
                "max_ms": max(medians),
                "runs": len(medians),
                **{k: last[k] for k in ("events", "cross_events", "rounds", "ready", "entities")},
            }
        serial = rows.get("serial-1", {}).get("median_ms")
        for row in rows.values():
            row["vs_serial"] = serial / row["median_ms"] if serial and row["median_ms"] else None
        table[label] = {"rows": rows, "digests_equal": len(digests) == 1}
    return table


def check_targets(table: dict) -> list[dict]:
    """The issue's targets against a table (None: a case is missing)."""
    out = []
    for label, case, versus, need in TARGETS:
        rows = table.get(label, {}).get("rows", {})
        ratio = None
        if case in rows and versus in rows:
            ratio = rows[versus]["median_ms"] / rows[case]["median_ms"]
        out.append(
            {
                "workload": label,
                "case": case,
                "versus": versus,
                "required": need,
                "ratio": ratio,
                "met": None if ratio is None else ratio >= need,
            }
        )
    return out


def markdown(table: dict, targets: list[dict], title: str) -> list[str]:
    """The table and the targets as Markdown lines."""
    lines = [f"### {title}", ""]
    for label, group in table.items():
        rows = group["rows"]
        lines += [
            f"{label} (digests {'equal' if group.get('digests_equal', True) else 'DIFFER'})",
            "",
            "| case | median ms | runs min-max | vs serial | rounds/step | ready/round "
            "| events/round |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, row in rows.items():
            rounds = max(row["rounds"], 1.0)
            spread = f"{row['min_ms']:.3g}-{row['max_ms']:.3g}" if "min_ms" in row else "(model)"
            vs = f"{row['vs_serial']:.2f}x" if row.get("vs_serial") else "-"
            lines.append(
                f"| {name} | {row['median_ms']:.3g} | {spread} | {vs} | {row['rounds']:.0f} "
                f"| {row['ready'] / rounds:.0f} | {row['events'] / rounds:.0f} |"
            )
        lines.append("")
    for t in targets:
        verdict = "no figure" if t["met"] is None else ("met" if t["met"] else "missed")
        ratio = "-" if t["ratio"] is None else f"{t['ratio']:.2f}x"
        lines.append(
            f"- {t['workload']}: {t['case']} vs {t['versus']} {ratio} "
            f"(target >= {t['required']:g}x): {verdict}"
        )
    return lines


# -- the model -----------------------------------------------------------------------------------
def sync_s(p: int) -> float:
    """One round's synchronization at ``p`` threads: two barriers and the listing."""
    from seer_env.stpa import cost_model

    barrier = cost_model.BARRIER_BASE_S + cost_model.BARRIER_PER_THREAD_S * max(0, p - 2)
    return 2 * barrier + SYNC_EXTRA_S if p > 1 else SYNC_EXTRA_S


def imbalance(kind: str, p: int, counters: dict) -> float:
    """The slowest worker's share of a round over the mean (see the module doc)."""
    if p == 1:
        return 1.0
    rounds = max(counters["rounds"], 1.0)
    if kind == "parallel":
        per_worker = max(counters["ready"] / rounds / p, 1e-9)
        return 1.0 + 1.0 / per_worker
    per_worker = max(counters["events"] / rounds / p, 1e-9)
    return 1.0 + math.sqrt(2.0 * math.log(p) / per_worker)


def modeled(one_thread_s: float, kind: str, counters: dict, p: int) -> float:
    """Step seconds at ``p`` threads, from the measured one-thread step (seconds)."""
    rounds = counters["rounds"]
    work = max(one_thread_s - rounds * sync_s(1), 0.0)
    cross = counters["cross_events"] * (1.0 - 1.0 / p) * CROSS_S
    return work / p * imbalance(kind, p, counters) + rounds * sync_s(p) + cross


COUNTERS = ("events", "cross_events", "rounds", "ready", "entities")


def model_table(here: dict, threads: list[int], barrier: list[int]) -> dict:
    """The modeled table from this machine's serial, rounds1 and barrier-1 rows."""
    table = {}
    for label, group in here.items():
        rows = group["rows"]
        counters = {k: rows["rounds1-1"][k] for k in COUNTERS}
        serial = rows["serial-1"]["median_ms"] / 1e3

        seconds = {"serial-1": serial}
        for p in threads:
            # A pool of one runs the serial loop.
            one = rows["rounds1-1"]["median_ms"] / 1e3
            seconds[f"parallel-{p}"] = serial if p == 1 else modeled(one, "parallel", counters, p)
        for p in barrier:
            one = rows["barrier-1"]["median_ms"] / 1e3
            seconds[f"barrier-{p}"] = modeled(one, "barrier", counters, p)
        out = {
            name: dict(counters, median_ms=t * 1e3, vs_serial=serial / t)
            for name, t in seconds.items()
        }
        table[label] = {"rows": out, "digests_equal": group["digests_equal"]}
    return table


def main(argv: list[str] | None = None) -> int:
    """Builds, measures (or models) and prints the many-core table."""
    doc = (__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m bench.many_core", description=doc)
    parser.add_argument("--build-dir", default=str(ROOT / "build" / "many-core"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--barrier", type=int, nargs="+", default=[16])
    parser.add_argument("--time-limit", type=float, default=480.0, help="seconds of measuring")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "many_core.json"))
    parser.add_argument("--model", action="store_true", help="the modeled table, from here")
    args = parser.parse_args(argv)
    jobs = max(1, os.cpu_count() or 1)
    start = time.perf_counter()
    driver = build(Path(args.build_dir), jobs)
    built_s = time.perf_counter() - start
    if args.model:
        one_thread = [("serial", 1), ("rounds1", 1), ("barrier", 1)]
        runs, rounds = measure(driver, WORKLOADS, one_thread, args.rounds, args.time_limit)
        here = summarize(runs)
        table = model_table(here, args.threads, args.barrier)
        title = "Modeled from this machine's one-thread steps and the work counters"
    else:
        runs, rounds = measure(
            driver, WORKLOADS, cases(args.threads, args.barrier), args.rounds, args.time_limit
        )
        here = table = summarize(runs)
        title = f"Measured: {rounds} interleaved rounds"
    targets = check_targets(table)
    lines = markdown(table, targets, title)
    if args.model:
        lines += ["", *markdown(here, [], "Measured here (the model's inputs)")]
    print("\n".join(lines))
    result = {
        "kind": "model" if args.model else "measured",
        "machine": machine(),
        "rounds": rounds,
        "build_seconds": built_s,
        "seconds": time.perf_counter() - start,
        "table": table,
        "measured": here,
        "targets": targets,
        "runs": runs,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(
        f"\nwrote {out} and {out.with_suffix('.md')} ({result['seconds']:.0f} s)", file=sys.stderr
    )
    return 0 if all(row.get("digests_equal", True) for row in table.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
