"""Load made by the bench itself: one busy process per usable CPU, always stopped.

Users rarely own a quiet machine (RLlib runs several env runners per node, CI
boxes are shared), so the contention groups repeat a few quiet groups with
``busy_processes(usable_threads())`` running: plain Python busy loops in
child processes, which inherit this process's CPU affinity and so compete
for exactly the CPUs the runtime may use.

They are bounded three ways: the context manager terminates them (then kills
them) on exit, exception or Ctrl-C; each one exits by itself after
``max_seconds``; and each one exits as soon as its parent is gone (a
``kill -9`` of the bench leaves nothing spinning).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

GRACE_S = 2.0  # wait this long for a terminated child before killing it
_BUSY = (
    "import os, sys, time\n"
    "parent, end = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])\n"
    "sys.stdout.write('ready\\n')\n"
    "sys.stdout.flush()\n"
    "while time.monotonic() < end and os.getppid() == parent:\n"
    "    for _ in range(20000):\n"
    "        pass\n"
)


@contextlib.contextmanager
def busy_processes(count: int, max_seconds: float = 600.0) -> Iterator[list[subprocess.Popen]]:
    """Run ``count`` busy-looping processes for the ``with`` block (at most ``max_seconds``).

    Yields once every process spins (each has written its ready line).
    """
    if count < 0 or not max_seconds > 0:
        raise ValueError(
            f"busy_processes needs count >= 0 and max_seconds > 0, got {count}, {max_seconds}"
        )
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-S", "-c", _BUSY, str(os.getpid()), str(max_seconds)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            )
        for p in procs:
            if p.stdout.readline() != b"ready\n":  # '' if it died before spinning
                raise RuntimeError(f"busy process {p.pid} exited early (code {p.poll()})")
        yield procs
    finally:
        stop(procs)


def stop(procs: list[subprocess.Popen]) -> None:
    """Terminate ``procs``, kill those that linger, reap all (even when interrupted)."""
    try:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=GRACE_S)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=GRACE_S)
            if p.stdout is not None:
                p.stdout.close()


def still_busy(procs: list[subprocess.Popen]) -> int:
    """How many of ``procs`` still run (a group checks its load lasted to its end)."""
    return sum(p.poll() is None for p in procs)
