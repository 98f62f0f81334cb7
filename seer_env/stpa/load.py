"""Contention: whether other work competed for the CPUs while STPA measured.

A pool size measured while other processes took the cores says little about
a quiet machine (and the other way round), so STPA reads the machine's load
counters around every measurement and keeps a decision only when none of
these signals says "contended":

* **CPU pressure over the window** (Linux PSI, ``/proc/pressure/cpu``): the
  share of the measurement's wall time in which some runnable task waited for
  a CPU (from the ``some total=`` counter, so it covers exactly the window,
  unlike the 10-second ``avg10``);
* **run fraction** of the one-thread candidates' steps: thread CPU time over
  wall time. A serial step never sleeps, so time off the CPU is time another
  thread held it (portable: no ``/proc`` needed);
* **steal** (``/proc/stat``): time a hypervisor gave this VM's CPUs away;
* **load average** against the logical CPUs: other runnable tasks alone fill
  every CPU (1-minute average: lags, so only this strong form counts).

Every figure is optional (a missing file is a missing signal). The readers
sit behind ``LoadSignal`` so tests substitute ``SimulatedLoad``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

__all__ = [
    "Contention",
    "LoadSignal",
    "Reading",
    "SimulatedLoad",
    "default_signal",
]

PRESSURE_LIMIT = 0.2  # some task waited for a CPU this share of the window: contended
RUN_FRACTION_MIN = 0.85  # a one-thread step on the CPU less than this share: preempted
STEAL_LIMIT = 0.10  # the hypervisor took this share of the CPUs' time
MIN_RUN_WALL_S = 1e-3  # run fraction over less stepping than this is not judged
_PSI_CPU = Path("/proc/pressure/cpu")
_PROC_STAT = Path("/proc/stat")


@dataclasses.dataclass(frozen=True)
class Reading:
    """The machine's load counters at one instant (None: not available here)."""

    wall: float  # time.perf_counter()
    pressure_total_us: int | None = None  # PSI "some" total: microseconds some task waited
    pressure_avg10: float | None = None  # PSI "some" avg10, as a fraction
    load_average: float | None = None  # 1-minute load average
    steal_ticks: int | None = None  # /proc/stat: steal, all CPUs
    total_ticks: int | None = None  # /proc/stat: every state, all CPUs


@dataclasses.dataclass(frozen=True)
class Contention:
    """What the load signals said over a window (or right now), and the verdict."""

    contended: bool
    reasons: tuple[str, ...]
    cpu_pressure: float | None  # over the window (``now()``: the 10 s average)
    run_fraction: float | None
    steal: float | None
    load_average: float | None
    window_s: float | None  # None for ``now()``

    def report(self) -> dict:
        """JSON-ready figures and verdict (``env.runtime.stpa["load"]``)."""
        return {
            "contended": self.contended,
            "reasons": list(self.reasons),
            "cpu_pressure": _round(self.cpu_pressure),
            "run_fraction": _round(self.run_fraction),
            "steal": _round(self.steal),
            "load_average": _round(self.load_average),
            "window_s": _round(self.window_s, 4),
        }

    def summary(self) -> str:
        """The reasons in one line, e.g. ``CPU pressure 42% (limit 20%)``."""
        return "; ".join(self.reasons) if self.reasons else "quiet"


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _psi_some(text: str | None) -> tuple[float | None, int | None]:
    """``(avg10 as a fraction, total microseconds)`` of PSI's ``some`` line."""
    avg10 = total = None
    for line in (text or "").splitlines():
        if not line.startswith("some"):
            continue
        for field in line.split():
            name, _, value = field.partition("=")
            try:
                if name == "avg10":
                    avg10 = float(value) / 100.0
                elif name == "total":
                    total = int(value)
            except ValueError:
                pass
    return avg10, total


def _cpu_ticks(text: str | None) -> tuple[int | None, int | None]:
    """``(steal, total)`` jiffies of the aggregate ``cpu`` line of /proc/stat."""
    for line in (text or "").splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            try:
                ticks = [int(v) for v in fields[1:9]]  # user .. steal (guest is in user)
            except ValueError:
                return None, None
            if len(ticks) < 8:
                return None, None
            return ticks[7], sum(ticks)
    return None, None


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _logical_cpus() -> int:
    return os.cpu_count() or 1


class LoadSignal:
    """Reads this machine's load counters and judges a window of them."""

    def read(self) -> Reading:
        """The counters now."""
        avg10, total = _psi_some(_read(_PSI_CPU))
        steal, ticks = _cpu_ticks(_read(_PROC_STAT))
        return Reading(time.perf_counter(), total, avg10, _load_average(), steal, ticks)

    def now(self) -> Contention:
        """A cheap verdict without a window: PSI ``avg10`` and the load average."""
        r = self.read()
        return _judge(r.pressure_avg10, None, None, r.load_average, None, "in the last 10 s")

    def over(
        self, before: Reading, after: Reading, run_cpu_s: float = 0.0, run_wall_s: float = 0.0
    ) -> Contention:
        """The verdict on the window ``before .. after``.

        ``run_cpu_s`` / ``run_wall_s``: thread CPU time and wall time of the
        one-thread steps measured in the window (0: none).
        """
        window = max(0.0, after.wall - before.wall)
        pressure = None
        if before.pressure_total_us is not None and after.pressure_total_us is not None:
            if window > 0:
                waited = max(0, after.pressure_total_us - before.pressure_total_us)
                pressure = min(1.0, waited / (window * 1e6))
        steal = None
        if None not in (before.steal_ticks, after.steal_ticks, before.total_ticks):
            ticks = after.total_ticks - before.total_ticks
            # A window shorter than a few jiffies has no meaningful steal share.
            if ticks >= 10:
                steal = max(0.0, (after.steal_ticks - before.steal_ticks) / ticks)
        run = run_cpu_s / run_wall_s if run_wall_s >= MIN_RUN_WALL_S else None
        return _judge(pressure, run, steal, before.load_average, window, "during the measurement")


def _judge(
    pressure: float | None,
    run_fraction: float | None,
    steal: float | None,
    load_average: float | None,
    window: float | None,
    when: str,
) -> Contention:
    reasons = []
    if pressure is not None and pressure > PRESSURE_LIMIT:
        reasons.append(f"CPU pressure {pressure:.0%} {when} (limit {PRESSURE_LIMIT:.0%})")
    if run_fraction is not None and run_fraction < RUN_FRACTION_MIN:
        reasons.append(
            f"one-thread steps on the CPU {run_fraction:.0%} of their time "
            f"(limit {RUN_FRACTION_MIN:.0%})"
        )
    if steal is not None and steal > STEAL_LIMIT:
        reasons.append(f"hypervisor steal {steal:.0%} (limit {STEAL_LIMIT:.0%})")
    cpus = _logical_cpus()
    # This process counts itself once; the rest of the 1-minute load filling
    # every CPU means other work kept them all busy.
    if load_average is not None and load_average - 1.0 >= cpus:
        reasons.append(f"load average {load_average:.2f} on {cpus} CPUs")
    return Contention(
        bool(reasons), tuple(reasons), pressure, run_fraction, steal, load_average, window
    )


class SimulatedLoad(LoadSignal):
    """A load signal with fixed figures, for tests (and for trying STPA's load handling).

    ``pressure``: CPU pressure the window (and ``now()``) reports;
    ``run_fraction`` replaces the measured one when given; ``load_average`` and
    ``steal`` likewise. ``SimulatedLoad()`` is a quiet machine.
    """

    def __init__(
        self,
        pressure: float = 0.0,
        *,
        run_fraction: float | None = 1.0,
        steal: float | None = 0.0,
        load_average: float | None = 0.0,
    ) -> None:
        self.pressure = pressure
        self.run_fraction = run_fraction
        self.steal = steal
        self.load_average = load_average

    def read(self) -> Reading:
        """Counters advancing as ``pressure`` says (steal is applied in ``over``)."""
        wall = time.perf_counter()
        total = int(wall * 1e6 * self.pressure)
        return Reading(wall, total, self.pressure, self.load_average, None, None)

    def over(
        self, before: Reading, after: Reading, run_cpu_s: float = 0.0, run_wall_s: float = 0.0
    ) -> Contention:
        """The simulated figures over the real window's length."""
        window = max(0.0, after.wall - before.wall)
        return _judge(
            self.pressure,
            self.run_fraction,
            self.steal,
            self.load_average,
            window,
            "during the measurement",
        )


DEFAULT = LoadSignal()


def default_signal() -> LoadSignal:
    """The signal ``stpa.choose`` uses when given none (tests replace ``DEFAULT``)."""
    return DEFAULT
