"""Memory of a PCS env per executor: RSS, and bytes per pending event.

Each case runs in a fresh process (peak RSS is per process): it imports
seer_env, builds a PCS ``size x size`` simulation on one executor, resets it
and steps it ``steps`` times (one simulated hour each), then reports

- ``import_mb``: RSS after ``import seer_env`` (the interpreter, numpy, the
  extension);
- ``rss_mb``: RSS after the steps, and ``above_import_mb`` = rss - import;
- ``peak_mb``: the process's peak RSS (``ru_maxrss``), import included: what
  the memory targets are stated in;
- ``pending``: events scheduled and not yet handled, and
  ``bytes_per_pending`` = above_import / pending (everything the env holds,
  states and outputs too, per pending event: an upper bound on what an event
  costs).

    python -m bench.memory                 # 128x128 and 256x256, serial and parallel-2
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
import json, os, resource, sys
def rss_mb():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
import seer_env
import_mb = rss_mb()
size, steps, executor, threads = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
config = {"width": size, "height": size, "move_interval": float(sys.argv[5])}
sim = seer_env.Simulation("pcs", config, executor=executor, num_threads=threads)
sim.reset(0)
for _ in range(steps):
    sim.run_until(sim.now + 60.0)
rss = rss_mb()
pending = sim.pending_count
print(json.dumps({
    "import_mb": import_mb,
    "rss_mb": rss,
    "above_import_mb": rss - import_mb,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "pending": pending,
    "bytes_per_pending": (rss - import_mb) * 2**20 / max(pending, 1),
}))
"""


def measure(size: int, steps: int, executor: str, threads: int, move_interval: float) -> dict:
    """One case in a fresh process; returns its figures (see the module doc)."""
    args = [str(size), str(steps), executor, str(threads), str(move_interval)]
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        check=True,
        capture_output=True,
        text=True,
    )
    row = json.loads(out.stdout)
    row.update(size=size, steps=steps, move_interval=move_interval)
    row["executor"] = f"{executor}-{threads}"
    return row


def run(sizes: list[int], steps: int = 3, move_interval: float = 450.0) -> list[dict]:
    """Every size on every executor (serial, parallel-2), each in a fresh process."""
    return [
        measure(size, steps, executor, threads, move_interval)
        for size in sizes
        for executor, threads in EXECUTORS
    ]


def table(rows: list[dict]) -> list[str]:
    """The rows as Markdown table lines."""
    lines = [
        "| PCS | executor | pending events | RSS above import (MB) | peak RSS (MB) "
        "| bytes per pending event |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']}x{r['size']} | {r['executor']} | {r['pending']:,} | "
            f"{r['above_import_mb']:.0f} | {r['peak_mb']:.0f} | {r['bytes_per_pending']:.0f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measures every size on every executor and prints a Markdown table."""
    doc = (__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=doc)
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--move-interval", type=float, default=450.0)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    rows = run(args.sizes, args.steps, args.move_interval)
    print("\n".join(table(rows)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
