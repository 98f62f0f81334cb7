"""Memory of a PCS env per executor: RSS, and bytes per pending event.

Each case runs in a fresh process (peak RSS is per process): it imports
seer_env, builds a PCS ``size x size`` env on one executor, resets it and
steps it ``steps`` times (one simulated hour each), then reports

- ``import_mb``: RSS after ``import seer_env`` (the interpreter, numpy, the
  extension);
- ``rss_mb``: RSS after the steps, and ``above_import_mb`` = rss - import;
- ``peak_mb``: the process's peak RSS (``VmHWM``), import included: what
  the memory targets are stated in;
- ``pending``: events scheduled and not yet handled, and
  ``bytes_per_pending`` = above_import / pending (everything the env holds,
  states and outputs too, per pending event: an upper bound on what an event
  costs).

Cases: serial and parallel-2, each with the first ``check_steps`` steps checked
(``--check-steps``, default ``0 2``: off, and the envs' default), and with
``--shed`` a parallel-2 env whose second worker is made to stall (a test
hook) until the adaptive pool has shed it and a probe confirmed the shed,
then released so that a probe may restore two threads: the peak over a shed
and its undoing, beside a twin that runs as many steps unstalled. ``--env``
steps a ``pcs_v0.parallel_env`` (the Python env: its per-agent dicts and
spaces add ~60 MB at 256x256) instead of a bare ``Simulation``.

    python -m bench.memory                 # 128x128 and 256x256
    python -m bench.memory --env --shed    # the env, with the shed rows
    python -m bench.memory --sizes 64 --steps 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

EXECUTORS = (("serial", 1), ("parallel", 2))

# The child: RSS from /proc (Linux), peak from getrusage (KiB on Linux).
_CHILD = """
import json, os, sys
def rss_mb():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
def peak_mb():
    # VmHWM: this program's own peak; ru_maxrss keeps the forking parent's across exec.
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
import numpy as np
import seer_env
from seer_env.envs import pcs_v0
import_mb = rss_mb()
size, steps, executor, threads = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
move_interval, checks = float(sys.argv[5]), int(sys.argv[6])
via_env, shed = sys.argv[7] == "env", sys.argv[8]
STALLED_STEPS, SHED_STEPS = 26, 56
config = {"width": size, "height": size, "move_interval": move_interval}
if via_env:
    env = pcs_v0.parallel_env(**config, executor=executor, num_threads=threads,
                              check_steps=checks, seed=0)
    env.reset(seed=0)
    sim = env.unwrapped.sim
    actions = np.zeros(size * size, np.int64)
    step = lambda: env.unwrapped.step_arrays(actions)
else:
    sim = seer_env.Simulation("pcs", config, executor=executor, num_threads=threads)
    sim.check_next_steps(checks)
    sim.reset(0)
    step = lambda: sim.run_until(sim.now + 60.0)
for _ in range(steps):
    step()
decisions = []
if shed != "steady":
    # Worker 1 sleeps 2 ms a round: the pool sheds it; the probe 8 steps
    # later stalls too (a confirmed shed), so does the next one. Released,
    # the next probe restores two threads (on a quiet machine). The "twin"
    # runs as many steps without the stall: per-entity queues keep growing
    # their key arrays for a while, so a shed compares with it.
    stall = shed == "shed"
    if stall:
        sim._stall_worker_for_testing(1, 2000)
    for k in range(SHED_STEPS):
        if stall and k == STALLED_STEPS:
            sim._stall_worker_for_testing(1, 0)
        step()
        decisions.append(sim.last_step["thread_decision"])
rss = rss_mb()
pending = sim.pending_count
print(json.dumps({
    "import_mb": import_mb,
    "rss_mb": rss,
    "above_import_mb": rss - import_mb,
    "peak_mb": peak_mb(),
    "pending": pending,
    "bytes_per_pending": (rss - import_mb) * 2**20 / max(pending, 1),
    "serial_loop": any("serial loop" in d for d in decisions),
    "one_thread_rounds": any("1 thread: rounds" in d for d in decisions),
    "restored": sim.last_step["threads"] == 2,
}))
"""


def measure(
    size: int,
    steps: int,
    executor: str,
    threads: int,
    move_interval: float,
    check_steps: int = 0,
    via_env: bool = False,
    shed: str = "steady",
) -> dict:
    """One case in a fresh process; returns its figures (see the module doc).

    ``shed``: ``"steady"``, ``"shed"`` (the stalled worker), or ``"twin"`` (as
    many steps as ``"shed"``, no stall).
    """
    args = [
        str(size),
        str(steps),
        executor,
        str(threads),
        str(move_interval),
        str(check_steps),
        "env" if via_env else "simulation",
        shed,
    ]
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        check=True,
        capture_output=True,
        text=True,
    )
    row = json.loads(out.stdout)
    row.update(size=size, steps=steps, move_interval=move_interval, check_steps=check_steps)
    row.update(layer="env" if via_env else "simulation")
    extra = {"steady": "", "shed": ", shed", "twin": ", as many steps unshed"}[shed]
    row["executor"] = f"{executor}-{threads}{extra}"
    return row


def run(
    sizes: list[int],
    steps: int = 3,
    move_interval: float = 450.0,
    check_steps: tuple[int, ...] = (0, 2),
    via_env: bool = False,
    shed: bool = False,
) -> list[dict]:
    """Every size on every executor and check count, each in a fresh process."""
    rows = []
    for size in sizes:
        for checks in check_steps:
            for executor, threads in EXECUTORS:
                rows.append(measure(size, steps, executor, threads, move_interval, checks, via_env))
        if shed:
            case = (size, steps, "parallel", 2, move_interval, check_steps[-1], via_env)
            rows += [measure(*case, kind) for kind in ("twin", "shed")]
    return rows


def _how_it_shed(row: dict) -> str:
    if not row["executor"].endswith(", shed"):
        return ""
    how = "serial loop" if row["serial_loop"] else "rounds on one thread"
    return f" ({how}, {'restored' if row['restored'] else 'not restored'})"


def table(rows: list[dict]) -> list[str]:
    """The rows as Markdown table lines."""
    lines = [
        "| PCS | executor | checked steps | pending events | RSS above import (MB) "
        "| peak RSS (MB) | bytes per pending event |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']}x{r['size']} | {r['executor']}{_how_it_shed(r)} | "
            f"{r.get('check_steps', 0)} | {r['pending']:,} | "
            f"{r['above_import_mb']:.0f} | {r['peak_mb']:.0f} | {r['bytes_per_pending']:.0f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measures every case and prints a Markdown table."""
    doc = (__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=doc)
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--move-interval", type=float, default=450.0)
    parser.add_argument("--check-steps", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--env", action="store_true", help="step pcs_v0.parallel_env")
    parser.add_argument("--shed", action="store_true", help="add the shed rows")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    rows = run(
        args.sizes,
        args.steps,
        args.move_interval,
        tuple(args.check_steps),
        args.env,
        args.shed,
    )
    print("\n".join(table(rows)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
