"""Alternating runs: every case of a workload once per round, rounds after rounds.

Round r runs the cases in the listed order rotated by r (A B C, then B C A,
then C A B), one process per run, so a burst of load from elsewhere, or a
drift over the session, hits every engine alike; the medians over rounds are
then compared. Each run's PEER line is checked against the workload (model,
size, end time, seed): a runner that ran something else is an error, not a
sample.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable

from bench.peers import peerline
from bench.peers.engines import ROOT, PeerCase
from bench.peers.workloads import Workload

# Seconds one run may take: the slowest sized run (USE on 2 threads, PCS
# 128x128) takes ~20 s on a quiet 2-vCPU machine and ~40 s beside a busy one.
RUN_TIMEOUT_S = 180.0
# Runs that time out are started again, once: ROOT-Sim 3.0's parallel engine
# can deadlock as it ends (gvt_msg_drain: one thread waits at the barrier
# while the other spins in a GVT round it started), a few times in a hundred
# runs beside load; a fresh process is a valid sample, the hang is reported.
RETRIES_AFTER_TIMEOUT = 1


def run_env() -> dict[str, str]:
    """The runs' environment: one BLAS thread; OpenMPI's mpirun allowed as root.

    The runs start in a scratch folder (ROSS writes ross.csv and a folder of
    statistics where it runs), so ``bench`` is put on PYTHONPATH for seer's.
    """
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(paths))
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


class RunError(RuntimeError):
    """A run failed: non-zero exit, timeout, or no (or a wrong) PEER line."""


class RunTimeout(RunError):
    """A run took longer than its limit (hung, or a far slower machine)."""


def run_process(case: PeerCase, timeout_s: float = RUN_TIMEOUT_S) -> tuple[str, float]:
    """Run the case's command; (its stdout, the process's wall seconds)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            case.command,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=case.env,
            cwd=case.cwd,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RunTimeout(f"{case.name}: no result after {timeout_s:.0f} s") from exc
    except OSError as exc:
        raise RunError(f"{case.name}: cannot start {case.command[0]}: {exc}") from exc
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-6:]
        raise RunError(f"{case.name}: exit {proc.returncode}: " + " | ".join(tail))
    return proc.stdout, elapsed


def check_sample(sample: dict, case: PeerCase, workload: Workload) -> None:
    """The PEER line describes this case's run of this workload."""
    expected = {
        "engine": case.engine,
        "mode": case.mode,
        "threads": case.threads,
        "model": workload.model,
        "size": workload.size,
        "seed": workload.seed,
    }
    wrong = {k: sample.get(k) for k, v in expected.items() if sample.get(k) != v}
    if sample.get("end_time") != workload.end_time:
        wrong["end_time"] = sample.get("end_time")
    if wrong:
        raise RunError(f"{case.name}: its PEER line says {wrong}, expected {expected}")


Runner = Callable[[PeerCase, float], tuple[str, float]]


def timeout_for(samples: list[dict]) -> float:
    """A run's limit: RUN_TIMEOUT_S, then, once the case has run, 10x its slowest run (>= 30 s).

    So a hang costs a case's own few runs' time, not minutes.
    """
    if not samples:
        return RUN_TIMEOUT_S
    return min(RUN_TIMEOUT_S, max(30.0, 10.0 * max(s["process_s"] for s in samples)))


def run_checked(
    case: PeerCase,
    workload: Workload,
    run: Runner = run_process,
    retries: list | None = None,
    timeout_s: float = RUN_TIMEOUT_S,
) -> dict:
    """One run's PEER line, checked; a timed-out run is retried (noted in ``retries``)."""
    for attempt in range(RETRIES_AFTER_TIMEOUT + 1):
        try:
            stdout, process_s = run(case, timeout_s)
        except RunTimeout as exc:
            if attempt == RETRIES_AFTER_TIMEOUT:
                raise
            if retries is not None:
                retries.append(f"{exc}; started again")
            continue
        sample = peerline.find(stdout)
        check_sample(sample, case, workload)
        sample["process_s"] = round(process_s, 6)
        return sample
    raise AssertionError("unreachable")


def run_rounds(
    workload: Workload,
    cases: list[PeerCase],
    rounds: int,
    run: Runner = run_process,
    progress: Callable[[str], None] | None = None,
) -> dict[str, dict]:
    """Run ``rounds`` rounds of ``cases``; per case name: samples, failures, round order.

    A failed run is recorded (``failures``) and the session goes on; a hung
    one is started again once (``retries``); the position each round ran the
    case at is kept (``order``).
    """
    results: dict[str, dict] = {
        c.name: {"samples": [], "failures": [], "retries": [], "order": []} for c in cases
    }
    for r in range(rounds):
        shift = r % len(cases) if cases else 0
        for position, case in enumerate(cases[shift:] + cases[:shift]):
            entry = results[case.name]
            entry["order"].append(position)
            try:
                limit = timeout_for(entry["samples"])
                sample = run_checked(case, workload, run, entry["retries"], limit)
            except (RunError, peerline.PeerLineError) as exc:
                entry["failures"].append(f"round {r + 1}: {exc}")
                if progress is not None:
                    progress(f"  round {r + 1} {case.name}: FAILED ({exc})")
                continue
            sample["round"] = r + 1
            entry["samples"].append(sample)
            if progress is not None:
                progress(
                    f"  round {r + 1} {case.name}: {sample['committed_events']} events "
                    f"in {sample['wall_s']:.3f} s"
                )
    return results
