"""What this process may run on: CPUs, cores, caches, affinity and cgroup quota.

Everything is read from ``os`` and Linux ``/sys`` / ``/proc`` files and every
read tolerates their absence (containers, macOS): a missing file is a missing
feature, never an error. ``usable_threads()`` is the hard cap STPA never
exceeds; inside a Ray worker it includes the CPUs Ray reserved for it
(``ray_assigned_cpus()``), so envs in several env runners of one node stay
within their own share instead of each sizing for the whole node.
"""

from __future__ import annotations

import math
import os
import platform
import sys
from pathlib import Path

_SYS_CPU = Path("/sys/devices/system/cpu")
_CGROUP_ROOT = Path("/sys/fs/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def allowed_cpus() -> list[int]:
    """CPU ids this process may run on (``taskset`` / cpuset affinity)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return list(range(os.cpu_count() or 1))


def _cgroup_paths() -> list[tuple[str, str]]:
    """``(controllers, path)`` of this process's cgroups, from /proc/self/cgroup."""
    text = _read(Path("/proc/self/cgroup")) or ""
    out = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            out.append((parts[1], parts[2]))
    return out


def _quota_v2(rel: str) -> float | None:
    # cpu.max is "max 100000" or "<quota> <period>"; limits nest, so the
    # smallest along the path to the root applies.
    best = None
    path = _CGROUP_ROOT / rel.lstrip("/")
    while True:
        fields = (_read(path / "cpu.max") or "").split()
        if len(fields) == 2 and fields[0] != "max":
            try:
                cpus = int(fields[0]) / int(fields[1])
                best = cpus if best is None else min(best, cpus)
            except (ValueError, ZeroDivisionError):
                pass
        if path == _CGROUP_ROOT or _CGROUP_ROOT not in path.parents:
            return best
        path = path.parent


def _quota_v1(rel: str) -> float | None:
    best = None
    for base in (_CGROUP_ROOT / "cpu", _CGROUP_ROOT / "cpu,cpuacct"):
        path = base / rel.lstrip("/")
        while base == path or base in path.parents:
            try:
                quota = int(_read(path / "cpu.cfs_quota_us") or "-1")
                period = int(_read(path / "cpu.cfs_period_us") or "0")
            except ValueError:
                quota, period = -1, 0
            if quota > 0 and period > 0:
                best = quota / period if best is None else min(best, quota / period)
            if path == base:
                break
            path = path.parent
    return best


def cgroup_cpu_quota() -> float | None:
    """CPUs' worth of time the cgroup quota allows (e.g. 1.5), or None if unlimited."""
    quotas = []
    for controllers, rel in _cgroup_paths():
        q = _quota_v2(rel) if controllers == "" else None
        if q is None and "cpu" in controllers.split(","):
            q = _quota_v1(rel)
        if q is not None:
            quotas.append(q)
    return min(quotas) if quotas else None


def ray_assigned_cpus() -> float | None:
    """CPUs Ray reserved for this process when it is a Ray worker, else None.

    An RLlib env runner (any Ray actor or task) holds ``num_cpus`` of its
    node's CPUs, e.g. ``num_cpus_per_env_runner``; Ray does not pin it to
    them (its affinity is the whole node), so only Ray knows its share. A
    worker that reserved no CPU gets 0.0. Never imports Ray: a process that
    has not imported it is not a Ray worker. The driver is not a worker
    (it reserves nothing): None.
    """
    ray = sys.modules.get("ray")
    if ray is None:
        return None
    try:
        if not ray.is_initialized():
            return None
        context = ray.get_runtime_context()
        if context.worker.mode != ray.WORKER_MODE:
            return None
        return float(context.get_assigned_resources().get("CPU", 0.0))
    except Exception:  # noqa: BLE001 - a Ray that cannot answer is not a grant to respect
        return None


def usable_threads() -> int:
    """Most threads that can run at once: affinity, capped by the cgroup quota and Ray's grant.

    A quota of 1.5 CPUs allows 1 thread's worth of uninterrupted time plus
    half of another; threads beyond ``floor`` would be throttled mid-step, so
    the quota rounds down (never below 1). The CPUs Ray reserved for this
    worker (``ray_assigned_cpus``) round down the same way.
    """
    n = len(allowed_cpus())
    for limit in (cgroup_cpu_quota(), ray_assigned_cpus()):
        if limit is not None:
            n = min(n, max(1, math.floor(limit + 1e-9)))
    return max(1, n)


def physical_cores(cpus: list[int]) -> int:
    """Distinct physical cores among ``cpus`` (SMT siblings count once)."""
    cores = set()
    for cpu in cpus:
        topo = _SYS_CPU / f"cpu{cpu}" / "topology"
        package = _read(topo / "physical_package_id")
        core = _read(topo / "core_id")
        if package is None or core is None:
            return len(cpus)  # topology unknown: assume no SMT
        cores.add((package, core))
    return max(1, len(cores))


def _size_bytes(text: str) -> int | None:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        if text[-1] in units:
            return int(text[:-1]) * units[text[-1]]
        return int(text)
    except (ValueError, IndexError):
        return None


def cache_sizes(cpu: int = 0) -> dict[str, int]:
    """Data/unified cache sizes seen by ``cpu``, e.g. ``{"L1d": 32768, "L2": ..., "L3": ...}``."""
    out: dict[str, int] = {}
    for index in sorted((_SYS_CPU / f"cpu{cpu}" / "cache").glob("index*")):
        level, kind = _read(index / "level"), _read(index / "type")
        size = _size_bytes(_read(index / "size") or "")
        if level is None or size is None or kind == "Instruction":
            continue
        out[f"L{level}" + ("d" if kind == "Data" else "")] = size
    return out


def cpu_model() -> str:
    """The CPU's marketing name, or the platform's processor string."""
    for line in (_read(Path("/proc/cpuinfo")) or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cpu_pressure() -> float | None:
    """Share of the last 10 s some runnable task waited for a CPU (Linux PSI), in [0, 1].

    High values mean other processes compete for the cores: a measurement
    taken now says little about a quiet machine, and vice versa.
    """
    for line in (_read(Path("/proc/pressure/cpu")) or "").splitlines():
        if line.startswith("some"):
            for field in line.split():
                if field.startswith("avg10="):
                    try:
                        return float(field[6:]) / 100.0
                    except ValueError:
                        return None
    return None


def machine_features() -> dict:
    """Static features of this machine as this process sees it (JSON-ready)."""
    cpus = allowed_cpus()
    cores = physical_cores(cpus)
    return {
        "cpu_model": cpu_model(),
        "arch": platform.machine(),
        "logical_cpus": os.cpu_count() or 1,
        "affinity_cpus": len(cpus),
        "cgroup_quota_cpus": cgroup_cpu_quota(),
        "ray_assigned_cpus": ray_assigned_cpus(),
        "usable_threads": usable_threads(),
        "physical_cores": min(cores, usable_threads()),
        "smt_per_core": max(1, round(len(cpus) / cores)),
        "caches": cache_sizes(cpus[0] if cpus else 0),
    }


def fingerprint(features: dict) -> dict:
    """The part of ``features`` that identifies the machine for the decision cache.

    No hostname: identical machines of a cluster share decisions. The usable
    thread count is in it, so a run under ``taskset`` never reuses a decision
    made with more CPUs.
    """
    keys = ("cpu_model", "arch", "logical_cpus", "usable_threads", "physical_cores")
    return {k: features[k] for k in keys}
