"""STPA regret: how close ``num_threads="auto"`` gets to the best fixed choice, per group.

Fixed choices are what STPA chooses between: serial and parallel at each
thread count (the comparison executors are not candidates). ``regret`` is
``auto / best - 1`` on the measured medians; ``choice_regret`` compares the
fixed case that matches auto's choice instead of the auto case itself, i.e.
the cost of the decision without the noise between two identical instances.
The target is regret <= 10% and never > 5% worse than serial.
"""

from __future__ import annotations


def regret_row(group: dict) -> dict | None:
    """The regret line of one group's results, or None without an auto case."""
    rows = {r["name"]: r for r in group["rows"]}
    auto = rows.get("auto")
    fixed = {
        name: r["median_ms"]
        for name, r in rows.items()
        if r.get("kind") == "executor" and r["executor"] in ("serial", "parallel")
    }
    if auto is None or "serial" not in fixed:
        return None
    best = min(fixed, key=fixed.get)
    matching = fixed.get(auto["choice"])
    return {
        "label": group["label"],
        "events_per_step": rows["serial"].get("events_per_step"),
        "fixed_ms": fixed,
        "auto_ms": auto["median_ms"],
        "choice": auto["choice"],
        "best": best,
        "regret": auto["median_ms"] / fixed[best] - 1.0,
        "choice_regret": matching / fixed[best] - 1.0 if matching is not None else None,
        "vs_serial": auto["median_ms"] / fixed["serial"] - 1.0,
        "preflight_s": auto.get("preflight_s"),
        "reason": auto.get("stpa_reason"),
    }


def regret_table(groups: list[dict]) -> list[dict]:
    """Regret lines of every group that has an auto case."""
    return [r for r in map(regret_row, groups) if r is not None]
