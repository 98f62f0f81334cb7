"""CPU time per step beside busy processes: what the load cannot move, next to the wall time.

Wall-clock ratios measured beside other busy processes swing from run to run
(who the scheduler runs when decides them). The CPU time a step takes from the
machine moves far less: it is what the env's threads ran, whoever else waited.
So for each case this tool steps ``serial``, ``parallel-2`` and ``auto``
(STPA's choice made now, cache off, as the bench's contention groups make it)
in interleaved turns (the order rotates every round) and records, per timed
step:

- ``wall``: ``perf_counter`` around the step;
- ``cpu``: the process's CPU time during the step (every thread) plus what this
  env's worker threads ran after it, until the next step or, after a turn's
  last step, ``TAIL_S`` later: a pool's workers spin for a while after each
  step (docs/runtime.md), and that spin is CPU the step took. Split into the
  caller's thread, the workers (per-thread CPU clocks, by thread id) and the
  rest (other threads of the process during the step);
- context switches: voluntary and involuntary, the process's during the step
  (``getrusage``) plus the workers' after it (``/proc/self/task/<tid>/status``);
- ``units``: the neighbours' work during the step. A neighbour is a child
  process doing a fixed unit of pure-Python work in a loop and counting units
  in shared memory (one slot each); its units per second beside each executor
  say what the env's threads took from a trainer's own.

Each case runs twice: quiet (no neighbours) and loaded (one neighbour per
usable CPU, started before the case is built, so auto's preflight runs beside
them). The targets, judged on the loaded runs over all timed steps (totals, so
a slow step counts as a user pays it): auto's CPU per step <= 1.1x serial's,
parallel-2's <= 1.3x, and serial's wall / auto's wall >= 0.95.

Linux only (per-thread CPU clocks and /proc). Between steps the caller does
only this bookkeeping (tens of microseconds, outside the figures) and, for
Aircraft, the policy's pass, unless ``--gap-ms`` makes it sleep there too, as
a longer policy pass would: the pool then parks between steps, and its spin
after every step counts.

    python -m bench.cpu_under_load             # PCS 64x64, 128x128, Aircraft 1024, PHOLD 16384
    python -m bench.cpu_under_load --cases pcs --sizes pcs=64 --json cpu.json
    python -m bench.cpu_under_load --quick     # seconds: tiny sizes, checks the machinery
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import gc
import json
import mmap
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from bench import aircraft, contention, pcs, phold
from bench.adapters import NEVER
from bench.executors import case_name, executor_variants
from bench.groups import LOAD_COUNTS
from bench.policy import MlpPolicy
from bench.timing import SETTLE_S, work_counters
from seer_env import stpa
from seer_env.envs import aircraft_v0, pcs_v0
from seer_env.stpa.cache import DecisionCache
from seer_env.stpa.decision import start_as_decided
from seer_env.stpa.hardware import cpu_pressure, usable_threads

# After a turn's last step the caller waits this long before the next turn:
# longer than a pool's idle spin (ThreadPool::kSpinMicros, 200 us), so that the
# spin lands in that step's window, not in the next executor's.
TAIL_S = 1e-3
UNIT = 500  # a neighbour's unit of work: a pure-Python loop of this many turns (10-25 us)
ROOT = Path(__file__).resolve().parents[1]


# -- the neighbours ---------------------------------------------------------

# A neighbour writes its count of done units into its 8-byte slot of a shared
# file after every unit (the parent samples the sum before and after each
# step). The file has no name (its descriptor is inherited), so even a kill -9
# of the bench leaves none behind. A neighbour stops after ``max_seconds``, or
# as soon as its parent is gone.
_NEIGHBOUR = (
    "# seer_env bench.cpu_under_load neighbour\n"
    "import mmap, os, sys, time\n"
    "fd, slot, parent = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])\n"
    "end, unit = time.monotonic() + float(sys.argv[4]), int(sys.argv[5])\n"
    "counts = memoryview(mmap.mmap(fd, 0)).cast('Q')\n"
    "sys.stdout.write('ready\\n')\n"
    "sys.stdout.flush()\n"
    "done = 0\n"
    "while time.monotonic() < end and os.getppid() == parent:\n"
    "    for _ in range(64):\n"  # the clock and the parent: read every 64 units
    "        for _ in range(unit):\n"
    "            pass\n"
    "        done += 1\n"
    "        counts[slot] = done\n"
)
MARKER = _NEIGHBOUR.splitlines()[0]  # in every neighbour's command line (tests look for it)


@dataclasses.dataclass
class Neighbours:
    """Running neighbours: ``units()`` is the work all of them have done so far."""

    procs: list[subprocess.Popen]
    counts: memoryview | None

    def units(self) -> int:
        """Units done so far, all neighbours together."""
        return sum(self.counts) if self.counts is not None else 0

    def alone_rate(self, seconds: float) -> float:
        """Units per second of all neighbours together while this process sleeps."""
        start, t0 = self.units(), time.perf_counter()
        time.sleep(seconds)
        return (self.units() - start) / (time.perf_counter() - t0)


@contextlib.contextmanager
def neighbours(count: int, max_seconds: float = 900.0) -> Iterator[Neighbours]:
    """``count`` neighbours for the ``with`` block, yielded once every one works.

    Bounded as ``contention.busy_processes``'s busy loops: stopped (terminated,
    then killed) on exit, exception or Ctrl-C; each exits by itself after
    ``max_seconds`` and as soon as this process is gone.
    """
    if count < 0 or not max_seconds > 0:
        raise ValueError(f"neighbours needs count >= 0 and max_seconds > 0: {count}, {max_seconds}")
    if count == 0:
        yield Neighbours([], None)
        return
    procs: list[subprocess.Popen] = []
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryFile(dir=shm) as f:
        f.write(bytes(8 * count))
        f.flush()
        shared = mmap.mmap(f.fileno(), 0)
        counts = memoryview(shared).cast("Q")
        try:
            for slot in range(count):
                args = [str(f.fileno()), str(slot), str(os.getpid()), str(max_seconds), str(UNIT)]
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-S", "-c", _NEIGHBOUR, *args],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        pass_fds=(f.fileno(),),
                    )
                )
            for p in procs:
                if p.stdout.readline() != b"ready\n":  # b'' if it died first
                    raise RuntimeError(f"neighbour {p.pid} exited early (code {p.poll()})")
            yield Neighbours(procs, counts)
        finally:
            contention.stop(procs)
            counts.release()  # before the map closes: a live view would block it
            shared.close()


# -- per-thread CPU time ----------------------------------------------------


def thread_cpu_ns(tid: int) -> int:
    """CPU time of thread ``tid`` of this process (Linux's per-thread clock id of a tid).

    ``MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)``: any thread of the process,
    not only Python's, at the scheduler's nanosecond accounting.
    """
    return time.clock_gettime_ns((~tid << 3) | 6)


def thread_switches(tid: int) -> tuple[int, int]:
    """(voluntary, involuntary) context switches of thread ``tid`` so far."""
    with open(f"/proc/self/task/{tid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if "ctxt_switches" in line)
    return int(fields["voluntary_ctxt_switches"]), int(fields["nonvoluntary_ctxt_switches"])


def task_ids() -> set[int]:
    """The ids of this process's threads now."""
    return {int(t) for t in os.listdir("/proc/self/task")}


# -- the cases --------------------------------------------------------------


@dataclasses.dataclass
class Runner:
    """One env on one executor: ``prepare()`` (untimed) then ``step()`` makes a step.

    ``workers``: the ids of the threads its pool started (none for serial).
    """

    name: str
    step: Callable[[], object]
    counters: Callable[[], dict]
    prepare: Callable[[], None] = lambda: None
    sim: object | None = None  # the runtime object it steps
    meta: dict = dataclasses.field(default_factory=dict)
    workers: tuple[int, ...] = ()
    samples: list[dict] = dataclasses.field(default_factory=list)
    # The last readings of each worker: a thread that exited keeps its last ones.
    _cpu: dict = dataclasses.field(default_factory=dict)
    _switches: dict = dataclasses.field(default_factory=dict)

    def worker_cpu(self) -> int:
        """CPU ns of the workers so far (a clock read each: cheap)."""
        for tid in self.workers:
            with contextlib.suppress(OSError):
                self._cpu[tid] = thread_cpu_ns(tid)
        return sum(self._cpu.values())

    def worker_switches(self) -> tuple[int, int]:
        """(voluntary, involuntary) context switches of the workers so far (/proc: slower)."""
        for tid in self.workers:
            with contextlib.suppress(OSError, KeyError, ValueError):
                self._switches[tid] = thread_switches(tid)
        return tuple(map(sum, zip(*self._switches.values()))) or (0, 0)


@dataclasses.dataclass(frozen=True)
class Workload:
    """How to build one workload's runners at a size, from the bench's own helpers."""

    model: str
    label: Callable[[int], str]
    config: Callable[[int], dict]
    model_config: Callable[[dict], dict]  # what STPA keys on
    make: Callable[[dict, str, int], Runner]


def pcs_runner(config: dict, executor: str, threads: int) -> Runner:
    """bench.pcs's case: ``step_arrays`` with a fixed batch of guard actions."""
    case = pcs.env_case(
        config, pcs.guard_actions(config["width"] * config["height"]), executor, threads
    )
    return Runner("", case.step, case.counters_per_step, sim=case.sim)


def phold_runner(config: dict, executor: str, threads: int) -> Runner:
    """bench.phold's case: ``run_until(now + dt)``."""
    case = phold.sim_case(config, executor, threads)
    return Runner("", case.step, case.counters_per_step, sim=case.sim)


def aircraft_runner(config: dict, executor: str, threads: int) -> Runner:
    """bench.aircraft's env and policy, the policy's pass untimed (``prepare``).

    The bench's Aircraft case times policy + env; here only the env step is the
    step, since the policy's CPU is the same on every executor and would only
    dilute the ratios.
    """
    env = aircraft_v0.parallel_env(
        **config, executor=executor, num_threads=threads, max_cycles=NEVER, seed=0, check_steps=0
    )
    env.reset()
    policy = MlpPolicy.for_env(env, hidden=aircraft.HIDDEN, action_scale=aircraft.ACTION_SCALE)
    state = {"obs": env.sim.observations(), "actions": None}

    def prepare() -> None:
        state["actions"] = policy(state["obs"])

    def step() -> None:
        state["obs"] = env.step_arrays(state["actions"])[0]

    return Runner("", step, lambda: work_counters(env.sim.last_step), prepare, sim=env.sim)


def aircraft_model_config(config: dict) -> dict:
    """STPA's config of an Aircraft env; runs a policy pass first.

    NumPy's BLAS may start threads on the first matrix product: started inside
    a runner's build they would be taken for its pool's workers.
    """
    probe = aircraft_v0.parallel_env(**config)
    probe.reset()
    MlpPolicy.for_env(probe, hidden=aircraft.HIDDEN)(probe.sim.observations())
    return probe._model_config


# The configurations of the bench's contention groups (bench.suites).
WORKLOADS = {
    "pcs": Workload(
        "pcs",
        lambda n: f"PCS {n}x{n}",
        lambda n: pcs.group(n, move_interval=450.0).config,
        lambda c: pcs_v0.parallel_env(**c)._model_config,
        pcs_runner,
    ),
    "aircraft": Workload(
        "aircraft",
        lambda n: f"Aircraft {n}",
        lambda n: aircraft.group(n).config,
        aircraft_model_config,
        aircraft_runner,
    ),
    "phold": Workload(
        "phold",
        lambda n: f"PHOLD {n}",
        lambda n: phold.group(n).config,
        lambda c: c,
        phold_runner,
    ),
}
SIZES = {"pcs": (64, 128), "aircraft": (1024,), "phold": (16384,)}
QUICK_SIZES = {"pcs": (8,), "aircraft": (16,), "phold": (64,)}
# 120 timed steps per executor (the wall target is over 100+); ``alone_s``: the
# neighbours' own rate is counted this long with the env idle, before each case.
DEFAULTS = {"rounds": 12, "steps": 10, "warmup": 3, "alone_s": 0.5}
QUICK = {"rounds": 2, "steps": 1, "warmup": 1, "alone_s": 0.1}


def build_runners(w: Workload, config: dict, warmup: int) -> list[Runner]:
    """serial, parallel-2 and auto, each warmed up; auto decides now (cache off)."""
    variants = [(case_name(e, t), e, t) for e, t in executor_variants(False, LOAD_COUNTS)]
    decision = stpa.choose(w.model, w.model_config(config), cache=DecisionCache(None))
    variants.append(("auto", decision.executor, decision.num_threads))
    runners = []
    for name, executor, threads in variants:
        before = task_ids()
        run = w.make(config, executor, threads)
        if name == "auto":
            start_as_decided(run.sim, decision.report)
        for _ in range(warmup):  # a pool starts its workers on its first step
            run.prepare()
            run.step()
        run.name = name
        run.workers = tuple(sorted(task_ids() - before))
        run.meta = {"executor": executor, "threads": threads, "worker_threads": len(run.workers)}
        if name == "auto":
            run.meta.update(
                choice=case_name(executor, threads),
                stpa_reason=decision.report.get("reason"),
                stpa_load=decision.report.get("load"),
                start_on_one_thread=decision.report.get("start_on_one_thread"),
            )
        runners.append(run)
    return runners


# -- timing -----------------------------------------------------------------


def _readings(run: Runner) -> tuple[int, ...]:
    """The cheap readings that bracket a step (clock reads and one system call).

    (process CPU, caller CPU, workers' CPU, process voluntary and involuntary switches).
    """
    me = resource.getrusage(resource.RUSAGE_SELF)
    return (
        time.process_time_ns(),
        time.thread_time_ns(),
        run.worker_cpu(),
        me.ru_nvcsw,
        me.ru_nivcsw,
    )


def run_turns(runners: list[Runner], nb: Neighbours, rounds: int, steps: int, gap_s: float) -> None:
    """``rounds`` rounds of one turn of ``steps`` timed steps per runner, order rotating.

    A step's window for its workers runs from its start to the next step's
    start (the turn's last: ``TAIL_S`` after it), so their spin after it
    counts; the caller's and the process's window is the step itself.
    """
    for r in range(rounds):
        k = r % len(runners)
        for run in runners[k:] + runners[:k]:
            gc.collect()  # the garbage of the other runners' turns, outside every window
            time.sleep(SETTLE_S)
            run.prepare()
            run.step()  # untimed, as the bench's turns: wakes a parked pool
            pending: dict | None = None
            for _ in range(steps):
                run.prepare()
                # /proc first: the cheap readings bracket the step tightly.
                switches = run.worker_switches()
                units = nb.units()
                before = _readings(run)
                if pending is not None:
                    run.samples.append(_sample(pending, before, switches))
                start = time.perf_counter()
                run.step()
                wall = time.perf_counter() - start
                after = _readings(run)
                pending = {
                    "wall": wall,
                    "before": before,
                    "after": after,
                    "units": nb.units() - units,
                    "switches": run.worker_switches(),
                    "counters": run.counters(),
                }
                if gap_s > 0:
                    time.sleep(gap_s)  # the caller's own work between steps (a policy pass)
            time.sleep(max(TAIL_S - gap_s, 0.0))
            switches = run.worker_switches()
            run.samples.append(_sample(pending, _readings(run), switches))


def _sample(step: dict, next_start: tuple[int, ...], next_switches: tuple[int, int]) -> dict:
    """One step's figures; ``next_*``: the readings where its workers' window ends."""
    b, a = step["before"], step["after"]
    in_step = (a[0] - b[0]) * 1e-9
    caller = (a[1] - b[1]) * 1e-9
    workers_in, workers_after = (a[2] - b[2]) * 1e-9, (next_start[2] - a[2]) * 1e-9
    vol, invol = (n - s for n, s in zip(next_switches, step["switches"]))
    return {
        "wall_s": step["wall"],
        "cpu_s": in_step + workers_after,
        "caller_cpu_s": caller,
        "workers_cpu_s": workers_in + workers_after,
        "workers_after_s": workers_after,
        "other_cpu_s": in_step - caller - workers_in,
        "voluntary": a[3] - b[3] + vol,  # the process's during the step, the workers' after
        "involuntary": a[4] - b[4] + invol,
        "neighbour_units": step["units"],
        "events": step["counters"]["events"],
        "threads": step["counters"]["threads"],
    }


def summarize(run: Runner) -> dict:
    """Means (totals / steps: what the targets judge), medians, min and max."""
    out: dict = {"name": run.name, **run.meta, "steps": len(run.samples)}
    for key in (
        "wall_s",
        "cpu_s",
        "caller_cpu_s",
        "workers_cpu_s",
        "workers_after_s",
        "other_cpu_s",
        "voluntary",
        "involuntary",
        "events",
        "threads",
    ):
        v = np.array([s[key] for s in run.samples], dtype=float)
        out[key] = {"mean": v.mean(), "median": float(np.median(v)), "min": v.min(), "max": v.max()}
        out[key] = {k: float(x) for k, x in out[key].items()}
    wall = sum(s["wall_s"] for s in run.samples)
    units = sum(s["neighbour_units"] for s in run.samples)
    out["neighbour_units_per_s"] = units / wall if wall > 0 else None
    return out


# -- targets and report -----------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Target:
    """``rows[executor][metric]`` against a bound, judged beside the neighbours."""

    executor: str
    metric: str  # "cpu_ratio" (CPU / serial's) or "speed" (serial's wall / wall)
    bound: float
    at_most: bool
    text: str

    def met(self, row: dict) -> bool:
        """Whether ``row`` (its ratios added) meets the target."""
        v = row[self.metric]
        return v <= self.bound if self.at_most else v >= self.bound


TARGETS = (
    Target("auto", "cpu_ratio", 1.1, True, "auto CPU/step <= 1.1x serial"),
    Target("parallel-2", "cpu_ratio", 1.3, True, "parallel-2 CPU/step <= 1.3x serial"),
    Target("auto", "speed", 0.95, False, "serial wall / auto wall >= 0.95"),
)


def add_ratios(rows: list[dict], judged: bool) -> None:
    """Each row against serial's: CPU, wall, the neighbours' rate; the targets' verdicts."""
    base = rows[0]
    assert base["name"] == "serial"
    for row in rows:
        row["cpu_ratio"] = row["cpu_s"]["mean"] / base["cpu_s"]["mean"]
        row["speed"] = base["wall_s"]["mean"] / row["wall_s"]["mean"]
        rate, base_rate = row["neighbour_units_per_s"], base["neighbour_units_per_s"]
        row["neighbour_ratio"] = rate / base_rate if rate is not None and base_rate else None
        row["targets"] = {
            t.text: t.met(row) for t in TARGETS if judged and t.executor == row["name"]
        }


def table(condition: dict) -> str:
    """A condition's Markdown table."""
    head = (
        "| case | executor | ran on | wall ms/step | CPU ms/step | of which workers "
        "| CPU/serial | serial wall/wall | ctx sw/step (vol+invol) | neighbour units/s "
        "| vs serial | targets |"
    )
    lines = [head, "|" + "---|" * 12]
    for case in condition["cases"]:
        for row in case["rows"]:
            ran = row.get("choice", row["name"])
            ran += f" ({row['threads']['mean']:.2g} thr)" if row["threads"]["max"] > 1 else ""
            rate = row["neighbour_units_per_s"]
            ratio = row["neighbour_ratio"]
            verdicts = "; ".join(
                f"{'met' if ok else 'MISSED'}: {text}" for text, ok in row["targets"].items()
            )
            lines.append(
                f"| {case['label']} | {row['name']} | {ran} "
                f"| {row['wall_s']['mean'] * 1e3:.3f} | {row['cpu_s']['mean'] * 1e3:.3f} "
                f"| {row['workers_cpu_s']['mean'] * 1e3:.3f} | {row['cpu_ratio']:.2f}x "
                f"| {row['speed']:.2f}x "
                f"| {row['voluntary']['mean']:.1f}+{row['involuntary']['mean']:.1f} "
                f"| {'-' if not condition['neighbours'] else f'{rate:.0f}'} "
                f"| {'-' if ratio is None or not condition['neighbours'] else f'{ratio:.2f}x'} "
                f"| {verdicts or '-'} |"
            )
    return "\n".join(lines)


def report(result: dict) -> str:
    """The Markdown: settings, targets, one table per condition."""
    s, m = result["settings"], result["machine"]
    out = [
        f"# CPU per step under load ({result['date']}, commit {result['commit']})",
        "",
        f"{m['usable_cpus']} usable CPUs; 1-min load average {m['load_before'][0]:.2f} "
        f"before, {m['load_after'][0]:.2f} after. Per executor {s['rounds']} rounds x "
        f"{s['steps']} timed steps, interleaved; figures are means (totals / steps; medians, "
        f"min and max in the JSON); caller idle between steps {s['gap_ms']:g} ms.",
        "",
        "Targets, beside one busy neighbour per usable CPU: "
        + "; ".join(t.text for t in TARGETS)
        + ("." if s["rounds"] * s["steps"] >= 100 else " (indicative: under 100 steps)."),
    ]
    for cond in result["conditions"]:
        n = cond["neighbours"]
        title = (
            "Quiet (no neighbours; not judged)"
            if not n
            else (
                f"Loaded: {n} neighbour(s), together {cond['alone_units_per_s']:.0f} units/s "
                "with the env idle"
            )
        )
        out += ["", f"## {title}", "", table(cond)]
    return "\n".join(out) + "\n"


# -- the run ----------------------------------------------------------------


def run_condition(cases, count: int, args) -> dict:
    """Every case beside ``count`` neighbours (0: quiet), neighbours restarted per case."""
    out: dict = {"neighbours": count, "cases": [], "alone_units_per_s": None}
    for w, size in cases:
        config = w.config(size)
        label = w.label(size)
        print(f"{label}, {'loaded' if count else 'quiet'} ...", file=sys.stderr, flush=True)
        with neighbours(count, args.max_seconds) as nb:
            alone = nb.alone_rate(args.alone_s) if count else None
            runners = build_runners(w, config, args.warmup)
            run_turns(runners, nb, args.rounds, args.steps, args.gap_ms * 1e-3)
            still = sum(p.poll() is None for p in nb.procs)
        rows = [summarize(r) for r in runners]
        add_ratios(rows, judged=count > 0)
        for row, run in zip(rows, runners):
            row["samples"] = run.samples
        out["cases"].append(
            {
                "label": label,
                "config": config,
                "alone_units_per_s": alone,
                "rows": rows,
                "neighbours_still_running": still,
            }
        )
        del runners, rows
        gc.collect()  # the envs and their pools go before the next case builds
    rates = [c["alone_units_per_s"] for c in out["cases"] if c["alone_units_per_s"]]
    out["alone_units_per_s"] = float(np.mean(rates)) if rates else None
    return out


def commit() -> str:
    """HEAD's hash, ``+dirty`` when the working tree differs from it."""
    try:
        run = lambda *a: subprocess.run(  # noqa: E731
            ["git", *a], cwd=ROOT, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        return run("rev-parse", "HEAD") + ("+dirty" if run("status", "--porcelain") else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def parse_sizes(items: list[str]) -> dict[str, tuple[int, ...]]:
    """``pcs=64,128 phold=4096`` -> {"pcs": (64, 128), "phold": (4096,)}."""
    out = {}
    for item in items:
        name, _, sizes = item.partition("=")
        if name not in WORKLOADS or not sizes:
            raise argparse.ArgumentTypeError(f"--sizes wants WORKLOAD=N[,N...], got {item!r}")
        out[name] = tuple(int(s) for s in sizes.split(","))
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options; ``--quick`` and ``--sizes`` applied, ``--neighbours`` defaulted."""
    p = argparse.ArgumentParser(
        prog="python -m bench.cpu_under_load", description=__doc__.split("\n")[0]
    )
    p.add_argument("--cases", nargs="+", choices=sorted(WORKLOADS), default=list(WORKLOADS))
    p.add_argument("--sizes", nargs="+", default=[], metavar="WORKLOAD=N[,N]")
    p.add_argument("--rounds", type=int, default=None, help="default 12 (--quick: 2)")
    p.add_argument("--steps", type=int, default=None, help="timed steps per turn: 10 (1)")
    p.add_argument("--warmup", type=int, default=None, help="untimed steps first: 3 (1)")
    p.add_argument(
        "--gap-ms", type=float, default=0.0, help="caller sleeps this long after each step"
    )
    p.add_argument("--neighbours", type=int, default=None, help="default: one per usable CPU")
    p.add_argument("--max-seconds", type=float, default=900.0, help="a neighbour's life, at most")
    p.add_argument("--alone-s", type=float, default=None, help="the neighbours' own rate: 0.5 s")
    p.add_argument("--quick", action="store_true", help="tiny sizes, 2 timed steps: seconds")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    sizes = dict(QUICK_SIZES if args.quick else SIZES)
    try:
        sizes.update(parse_sizes(args.sizes))
    except (argparse.ArgumentTypeError, ValueError) as e:
        p.error(str(e))
    defaults = QUICK if args.quick else DEFAULTS
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if min(args.rounds, args.steps, args.warmup) < 1:
        p.error("--rounds, --steps and --warmup must be >= 1")
    args.sizes = sizes
    if args.neighbours is None:
        args.neighbours = usable_threads()
    return args


def main(argv: list[str] | None = None) -> dict:
    """Run, print the Markdown, write the JSON; returns the result."""
    if not sys.platform.startswith("linux"):
        raise SystemExit("bench.cpu_under_load reads per-thread CPU clocks and /proc: Linux only")
    args = parse_args(argv)
    cases = [(WORKLOADS[n], s) for n in args.cases for s in args.sizes[n]]
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "settings": {
            "rounds": args.rounds,
            "steps": args.steps,
            "warmup": args.warmup,
            "gap_ms": args.gap_ms,
            "tail_ms": TAIL_S * 1e3,
            "unit": UNIT,
            "alone_s": args.alone_s,
            "neighbours": args.neighbours,
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        },
        "targets": [dataclasses.asdict(t) for t in TARGETS],
        "machine": {
            "nproc": os.cpu_count(),
            "affinity": sorted(os.sched_getaffinity(0)),
            "usable_cpus": usable_threads(),
            "load_before": os.getloadavg(),
            "cpu_pressure_before": cpu_pressure(),
        },
    }
    # Quiet first, so the load figures of the quiet runs are not the neighbours'.
    counts = (0, args.neighbours) if args.neighbours > 0 else (0,)
    result["conditions"] = [run_condition(cases, n, args) for n in counts]
    result["machine"]["load_after"] = os.getloadavg()
    result["machine"]["cpu_pressure_after"] = cpu_pressure()
    print(report(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    # NumPy's BLAS threads spin after the Aircraft policy's matmuls and would
    # count as this process's CPU (bench/__main__.py does the same).
    if os.environ.get("OMP_NUM_THREADS") != "1":
        os.environ["OMP_NUM_THREADS"] = "1"
        os.execv(sys.executable, [sys.executable, "-m", "bench.cpu_under_load", *sys.argv[1:]])
    main()
