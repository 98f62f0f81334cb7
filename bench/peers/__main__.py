"""``python -m bench.peers`` (``make bench-peers``): seer beside ROSS, ROOT-Sim and USE.

Builds our PCS and PHOLD runners against each engine whose checkout is named
(``SEER_PEER_ROSS``, ``SEER_PEER_ROOTSIM``, ``SEER_PEER_USE``, or ``--ross``
...), then runs every engine's modes on each workload in alternating rounds
and writes ``results.json`` and ``results.md`` (default: the ``peers`` folder of
bench/results).
An engine without a checkout, or whose build cannot run, is left out with a
line saying why; with no peer left the command exits 2.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.peers import build, engines, harness, report, summary
from bench.peers.engines import ROOT
from bench.peers.harness import run_env
from bench.peers.workloads import DEFAULT_ROUNDS, PROFILES


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__.splitlines()[0])
    p.add_argument("--profile", choices=sorted(PROFILES), default="full")
    p.add_argument("--rounds", type=int, default=None, help="default: 3 (full), 2 (smoke)")
    p.add_argument("--only", default=None, help="workloads whose label contains this text")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "peers")
    p.add_argument("--build-dir", type=Path, default=ROOT / "build" / "peers")
    for e in engines.PEERS:
        p.add_argument(f"--{e.name}", metavar="CHECKOUT", help=f"default: ${e.env_var}")
    p.add_argument(
        "--engines",
        default=None,
        help="comma-separated peers to use (default: every one with a checkout)",
    )
    return p.parse_args(argv)


def machine() -> dict:
    """CPU, usable threads, load and CPU pressure now (seer_env's own hardware probe)."""
    from seer_env.stpa import hardware

    info = hardware.machine_features()
    info["python"] = platform.python_version()
    info["platform"] = platform.platform()
    info["load_start"], info["cpu_pressure_start"] = load()
    return info


def load() -> tuple[float | None, float | None]:
    """1-minute load average and CPU pressure (PSI some avg10, 0..1)."""
    from seer_env.stpa import hardware

    try:
        avg = round(os.getloadavg()[0], 2)
    except OSError:
        avg = None
    pressure = hardware.cpu_pressure()
    return avg, None if pressure is None else round(pressure, 3)


def main(argv: list[str] | None = None) -> int:
    """Build, run, summarize, write; the exit code (2: no peer engine could run)."""
    args = parse_args(argv)
    peers = engines.PEERS
    if args.engines:
        wanted = {n.strip() for n in args.engines.split(",")}
        unknown = wanted - {e.name for e in peers}
        if unknown:
            print(f"unknown engine(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        peers = tuple(e for e in peers if e.name in wanted)
    overrides = {e.name: getattr(args, e.name) for e in peers if getattr(args, e.name)}
    ready, lines = build.prepare(peers, overrides, args.build_dir)
    for line in lines:
        print(line, flush=True)
    if not ready:
        print(
            "bench-peers: no peer engine to compare with. Set SEER_PEER_ROSS, SEER_PEER_ROOTSIM "
            "and/or SEER_PEER_USE to a checkout of that engine (bench/peers/README.md).",
            file=sys.stderr,
        )
        return 2
    workloads = [w for w in PROFILES[args.profile] if not args.only or args.only in w.label]
    rounds = args.rounds or DEFAULT_ROUNDS[args.profile]
    max_threads = _usable_threads()
    env = run_env()
    given = argv if argv is not None else sys.argv[1:]
    results = {
        "command": "python -m bench.peers " + shlex.join(given),
        "date": datetime.date.today().isoformat(),
        "profile": args.profile,
        "rounds": rounds,
        "machine": machine(),
        "engines": [{"name": "seer", "label": "seer_env", **seer_info()}]
        + [{"name": b.engine.name, "label": b.engine.label, **b.info} for b in ready],
        "notes": _refusals(ready, workloads)
        + ([f"modes on more than {max_threads} threads left out"] if max_threads < 2 else []),
        "workloads": [],
    }
    start = time.perf_counter()
    scratch = tempfile.TemporaryDirectory(prefix="seer-peers-")
    for w in workloads:
        cases = engines.cases_for(engines.SEER, w, None, max_threads, env, scratch.name)
        for b in ready:
            cases += engines.cases_for(b.engine, w, b.bin_dir, max_threads, env, scratch.name)
        print(f"{w.label}: {len(cases)} cases x {rounds} rounds", flush=True)
        runs = harness.run_rounds(w, cases, rounds, progress=lambda s: print(s, flush=True))
        results["workloads"].append(
            {
                "label": w.label,
                "model": w.model,
                "size": w.size,
                "end_time": w.end_time,
                "seed": w.seed,
                "commands": {c.name: shlex.join(c.command) for c in cases},
                "runs": runs,
                "summary": summary.summarize(runs),
            }
        )
    scratch.cleanup()
    results["seconds"] = time.perf_counter() - start
    results["machine"]["load_end"], results["machine"]["cpu_pressure_end"] = load()
    results["paper"] = summary.paper_comparison(results["workloads"])
    results["readme_line"] = report.readme_line(results)
    print(report.markdown(results), flush=True)
    for path in report.write(results, args.out):
        print(f"wrote {path}")
    return 0


def seer_info() -> dict[str, str]:
    """This checkout's commit, and whether it has local changes (read, never changed)."""

    def git(*args: str) -> str:
        # --no-optional-locks: `status` then never refreshes (writes) the index.
        command = ["git", "--no-optional-locks", "-C", str(ROOT), *args]
        proc = subprocess.run(command, capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    commit = git("rev-parse", "HEAD") or "unknown"
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return {
        "commit": commit,
        "describe": "working tree with local changes" if dirty else "clean checkout",
        "build": "the editable install (seer_env imported by bench.peers.seer_runner)",
    }


def _usable_threads() -> int:
    from seer_env.stpa import hardware

    return hardware.usable_threads()


def _refusals(ready: list[build.Built], workloads: list) -> list[str]:
    """A note for each engine mode that does not run a model of this profile, and why."""
    models = {w.model for w in workloads}
    notes = []
    for b in ready:
        for m in b.engine.modes:
            for model in sorted(models - set(m.models)):
                notes.append(
                    f"{b.engine.label} {m.name} x{m.threads} does not run {model}: {m.refuses}"
                )
    return notes


if __name__ == "__main__":
    sys.exit(main())
