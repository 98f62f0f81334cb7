"""95% confidence intervals of a mean and of a difference of two means (Welch).

Student's t quantiles from a table (no SciPy in the bench's dependencies): the
two-sided 95% quantile for 1..30 degrees of freedom, then the 40, 60 and 120
rows, then the normal's 1.96. A fractional Welch df is rounded down, which
widens the interval a little.
"""

from __future__ import annotations

import math
import statistics

_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t975(df: float) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (floor of df)."""
    k = math.floor(df)
    if k < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if k <= 30:
        return _T975[k - 1]
    return 2.021 if k < 60 else 2.000 if k < 120 else 1.980 if k < 1000 else 1.960


def mean_ci(values: list[float]) -> dict:
    """Mean and its 95% interval (zero width for identical values)."""
    n = len(values)
    mean = statistics.fmean(values)
    half = t975(n - 1) * statistics.stdev(values) / math.sqrt(n) if n > 1 else math.inf
    return {"n": n, "mean": mean, "low": mean - half, "high": mean + half}


def welch(a: list[float], b: list[float]) -> dict:
    """Mean of ``a`` minus mean of ``b``, its 95% interval and Welch's df."""
    va = statistics.variance(a) / len(a)
    vb = statistics.variance(b) / len(b)
    diff = statistics.fmean(a) - statistics.fmean(b)
    se = math.sqrt(va + vb)
    if se == 0.0:
        return {"diff": diff, "low": diff, "high": diff, "df": math.inf}
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = t975(df) * se
    return {"diff": diff, "low": diff - half, "high": diff + half, "df": df}


def overlap(x: dict, y: dict) -> bool:
    """Whether two intervals (``low``, ``high``) share a point."""
    return x["low"] <= y["high"] and y["low"] <= x["high"]
