"""The engines compared, their modes, and the command line of each run.

Peers: ROSS (``mpirun -np N``; ``--synch`` 1 sequential, 2 conservative, 3
optimistic), ROOT-Sim 3.0 (its serial engine, and its optimistic parallel
engine on N threads) and USE (optimistic, N threads). Each is found through
an environment variable naming a checkout (``SEER_PEER_ROSS``, ...) and built
by its ``bench/peers/<engine>/build.sh``. seer runs ``seer_runner`` with the
serial executor and the parallel one on 1 and 2 threads.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

from bench.peers.workloads import Workload

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the repository
MODELS = ("pcs", "phold")


@dataclasses.dataclass(frozen=True)
class Mode:
    """One way an engine runs: its synchronization and thread (or rank) count."""

    name: str
    threads: int
    models: tuple[str, ...] = MODELS
    # Why a model is not run in this mode (the harness prints it once).
    refuses: str = ""


@dataclasses.dataclass(frozen=True)
class Engine:
    """An engine: where its checkout is named, how it is built, how a run is launched."""

    name: str
    label: str
    env_var: str | None  # None: seer itself, always there
    modes: tuple[Mode, ...]
    # (mode, workload, folder of the built runners) -> argv
    command: Callable[[Mode, Workload, Path | None], list[str]]

    @property
    def build_script(self) -> Path | None:
        """``bench/peers/<name>/build.sh`` (None for seer)."""
        return None if self.env_var is None else HERE / self.name / "build.sh"


@dataclasses.dataclass
class PeerCase:
    """One engine mode on one workload: the unit the harness alternates."""

    engine: str
    mode: str
    threads: int
    command: list[str]
    env: dict[str, str] | None = None
    cwd: str | None = None  # engines write files where they run (ROSS: ross.csv)

    @property
    def name(self) -> str:
        """``ross optimistic x2``."""
        return f"{self.engine} {self.mode} x{self.threads}"


def _seer(mode: Mode, w: Workload, bin_dir: Path | None) -> list[str]:
    executor = "serial" if mode.name == "serial" else "parallel"
    return [
        sys.executable,
        "-m",
        "bench.peers.seer_runner",
        f"--model={w.model}",
        f"--executor={executor}",
        f"--threads={mode.threads}",
        *w.options(),
    ]


_ROSS_SYNCH = {"sequential": 1, "conservative": 2, "optimistic": 3}


def _ross(mode: Mode, w: Workload, bin_dir: Path | None) -> list[str]:
    binary = str(Path(bin_dir or ".") / f"ross_{w.model}")
    return [
        "mpirun",
        "-np",
        str(mode.threads),
        binary,
        f"--synch={_ROSS_SYNCH[mode.name]}",
        *w.options(),
    ]


def _rootsim(mode: Mode, w: Workload, bin_dir: Path | None) -> list[str]:
    binary = str(Path(bin_dir or ".") / f"rootsim_{w.model}")
    engine = ["--serial=1"] if mode.name == "serial" else [f"--threads={mode.threads}"]
    return [binary, *engine, *w.options()]


def _use(mode: Mode, w: Workload, bin_dir: Path | None) -> list[str]:
    binary = str(Path(bin_dir or ".") / f"use_{w.model}")
    return [binary, f"--threads={mode.threads}", *w.options()]


SEER = Engine(
    "seer",
    "seer_env",
    None,
    (Mode("serial", 1), Mode("parallel", 1), Mode("parallel", 2)),
    _seer,
)
PEERS = (
    Engine(
        "ross",
        "ROSS",
        "SEER_PEER_ROSS",
        (
            Mode("sequential", 1),
            Mode("optimistic", 2),
            Mode(
                "conservative",
                2,
                models=("phold",),
                refuses="ROSS's conservative mode needs every event, self-events included, "
                "at least the lookahead ahead; PCS schedules self-events at any offset",
            ),
        ),
        _ross,
    ),
    Engine(
        "rootsim",
        "ROOT-Sim",
        "SEER_PEER_ROOTSIM",
        (Mode("serial", 1), Mode("optimistic", 1), Mode("optimistic", 2)),
        _rootsim,
    ),
    Engine(
        "use",
        "USE",
        "SEER_PEER_USE",
        (Mode("optimistic", 1), Mode("optimistic", 2)),
        _use,
    ),
)


def cases_for(
    engine: Engine,
    workload: Workload,
    bin_dir: Path | None,
    max_threads: int,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> list[PeerCase]:
    """The engine's modes that run this workload on at most ``max_threads``."""
    return [
        PeerCase(engine.name, m.name, m.threads, engine.command(m, workload, bin_dir), env, cwd)
        for m in engine.modes
        if workload.model in m.models and m.threads <= max_threads
    ]
