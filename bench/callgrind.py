"""The cost-model line: instructions per event under callgrind, serial vs parallel x1.

Instruction counts do not depend on what else the machine runs, so this line
is comparable across noisy runs where wall times are not. Each executor runs
PHOLD in a child Python under ``valgrind --tool=callgrind``, collecting only
inside the executor's step function (``--toggle-collect``), and the collected
instructions are divided by the events those steps handled.

valgrind cannot follow a pyenv shim (a shell script), so the child is the
interpreter binary itself (``sys.executable``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

CONFIG = dict(num_entities=1024, population=1, remote=0.25, work=0, dt=1.0)
STEPS = 20

# Where each executor's step work happens (C++ symbols, demangled). A parallel
# pool of one runs the serial executor's loop (ParallelExecutor::run_step calls
# it), so parallel x1 shows what the pool of one adds to serial (about nothing);
# the round machinery's own per-event cost needs two threads or more.
COLLECT = {
    "serial": "*SerialExecutor::run_step*",
    "parallel": "*ParallelExecutor::run_step*",
}

CHILD = """
import sys, seer_env
sim = seer_env.Simulation("phold", {config!r}, executor={executor!r}, num_threads=1)
sim.reset(0)
sim.run_until({steps} * {dt})
print("EVENTS", sim.events_processed)
"""


def _collected(out_file: str) -> int:
    """Instructions collected, from the callgrind output's ``totals:`` (or ``summary:``)."""
    with open(out_file) as f:
        text = f.read()
    match = re.search(r"^(?:totals|summary):\s*(\d+)", text, re.M)
    if match is None:
        raise RuntimeError(f"no totals in {out_file}")
    return int(match.group(1))


def measure(executor: str, workdir: str) -> dict:
    """Instructions per event of one executor (``threads=1``)."""
    out_file = os.path.join(workdir, f"callgrind.{executor}.out")
    script = CHILD.format(config=CONFIG, executor=executor, steps=STEPS, dt=CONFIG["dt"])
    cmd = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out_file}",
        f"--toggle-collect={COLLECT[executor]}",
        sys.executable,
        "-c",
        script,
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    events = int(re.search(r"^EVENTS (\d+)", proc.stdout, re.M).group(1))
    instructions = _collected(out_file)
    return {
        "executor": executor if executor == "serial" else f"{executor}-1",
        "instructions": instructions,
        "events": events,
        "instructions_per_event": instructions / events,
    }


def run() -> dict:
    """The cost-model line for serial and parallel x1, or why it was skipped."""
    workload = (
        f"PHOLD {CONFIG['num_entities']} entities, remote {CONFIG['remote']}, "
        f"work {CONFIG['work']}, {STEPS} steps"
    )
    if shutil.which("valgrind") is None:
        return {"workload": workload, "skipped": "valgrind not found (apt-get install valgrind)"}
    with tempfile.TemporaryDirectory() as workdir:
        try:
            rows = [measure(e, workdir) for e in COLLECT]
        except (subprocess.CalledProcessError, RuntimeError, AttributeError) as exc:
            detail = getattr(exc, "stderr", "") or ""
            return {"workload": workload, "skipped": f"callgrind failed: {exc} {detail[-500:]}"}
    return {"workload": workload, "rows": rows}
