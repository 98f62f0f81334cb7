"""A simulated machine for the STPA tests: its features, its load, and the workloads measured.

The preflight still runs for real; only what STPA reads about the machine (usable
threads, CPU pressure) is what a test says. The fixtures that install it are in
tests/stpa/conftest.py.
"""

from seer_env.stpa import hardware
from seer_env.stpa import load as stpa_load

PHOLD = dict(num_entities=256, population=2, remote=0.5, lookahead=0.2, work=50)
PCS = dict(width=6, height=4, phones_per_cell=8, move_interval=300.0)


_REAL_FEATURES = hardware.machine_features()


def fake_features(usable=4, **extra):
    """This machine's features, with ``usable`` threads (decisions need >= 2 to be made)."""
    f = dict(_REAL_FEATURES)
    f.update(usable_threads=usable, physical_cores=usable, affinity_cpus=usable, **extra)
    return f


QUIET = stpa_load.SimulatedLoad()
LOADED = stpa_load.SimulatedLoad(0.42)  # a burst: CPU pressure 42%


def simulate_load(monkeypatch, signal):
    """Make ``signal`` the load STPA reads from now on."""
    monkeypatch.setattr(stpa_load, "DEFAULT", signal)
