"""The preflight's throw-away copies (``seer_env.stpa.preflight``): in lockstep, timed."""

import os
import subprocess
import sys

import pytest
from stpa_machine import PCS, PHOLD

from seer_env.envs import pcs_v0
from seer_env.stpa import load as stpa_load
from seer_env.stpa.preflight import SERIAL, Candidate, Preflight

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def test_preflight_does_not_touch_the_env_simulation(machine):
    env = pcs_v0.parallel_env(**PCS, seed=5, executor=None, num_threads="auto")
    env.reset()
    assert env.sim.steps == 0 and env.sim.events_processed == 0


def test_duel_pairs_steps_at_the_same_indices():
    sims = {}
    pf = Preflight("phold", PHOLD, seed=3)
    pf.start(SERIAL)
    pf.add(Candidate(2, "parallel"))
    for r in range(3):
        pf.run_round(2, order_shift=r, wake=r == 0)
    for c in pf.candidates:
        sims[c] = pf._sims[c].digest()
    assert len(set(sims.values())) == 1  # same state at the same step index
    assert len(pf.samples[SERIAL]) == len(pf.samples[Candidate(2, "parallel")]) == 6
    assert pf.run_wall_s > 0  # the serial copy's steps count toward the run fraction
    pf.close()


def test_one_thread_steps_measure_their_run_fraction_for_real():
    # Pin this (fresh) process and a busy child to one CPU: the scheduler
    # splits it, so a serial step is on the CPU about half its wall time.
    code = (
        "import os, subprocess, sys, time\n"
        "cpu = min(os.sched_getaffinity(0)); os.sched_setaffinity(0, {cpu})\n"
        "spin = 'import time\\nend = time.monotonic() + 60\\nwhile time.monotonic() < end: pass'\n"
        "busy = subprocess.Popen([sys.executable, '-c', spin])  # bounded even if we die\n"
        "time.sleep(0.3)\n"
        "from seer_env.stpa.preflight import Preflight\n"
        "pf = Preflight('phold', dict(num_entities=256, work=2000, dt=1.0), seed=1)\n"
        "try:\n"
        "    pf.probe(timed=20)\n"
        "finally:\n"
        "    busy.kill()\n"
        "print(pf.run_cpu_s / pf.run_wall_s)\n"
    )
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs sched_setaffinity (Linux)")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    fraction = float(out.stdout.split()[-1])
    assert fraction < stpa_load.RUN_FRACTION_MIN, fraction
