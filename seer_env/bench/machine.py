"""What machine a benchmark ran on: cores, affinity, quota, CPU model."""

from __future__ import annotations

import os
import platform


def cpu_quota() -> float | None:
    """CPUs allowed by the cgroup v2 quota (``cpu.max``), or None if unlimited."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return int(quota) / int(period)


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (or the platform's guess)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def usable_cpus() -> int:
    """CPUs this process may use: affinity, capped by the cgroup quota."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cpu_quota()
    if quota is not None:
        n = max(1, min(n, int(quota)))
    return n


def machine_info() -> dict:
    """Everything a reader needs to interpret the numbers."""
    return {
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cgroup_quota_cpus": cpu_quota(),
        "usable_cpus": usable_cpus(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
