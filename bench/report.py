"""Benchmark results as ratios, and as files: JSON, a Markdown table, PNG plots."""

from __future__ import annotations

import json
import os

import numpy as np

from bench import memory, plots
from bench.groups import (
    AUTO_VS_BEST_UNDER_LOAD,
    EVERY_GROUP,
    EVERY_GROUP_PROFILE,
    Ratio,
    Target,
)

BASELINES = ("reference", "async-vec", "supersuit")
LOADED = 0.2  # CPU pressure (PSI some avg10) above which timings are flagged as noisy


def add_ratios(rows: list[dict]) -> None:
    """Speed-up vs serial and vs each alternative: ``other median / this median`` (> 1: faster)."""
    by_name = {r["name"]: r for r in rows}
    for r in rows:
        for other in ("serial", *BASELINES):
            key = "speedup_vs_serial" if other == "serial" else f"vs_{other}"
            base = by_name.get(other)
            r[key] = base["median_ms"] / r["median_ms"] if base and r["median_ms"] > 0 else None


def check_targets(rows: list[dict], targets: tuple[Target, ...]) -> list[dict]:
    """Each target's measured ratio and whether it holds (None: a case is missing)."""
    by_name = {r["name"]: r for r in rows}
    out = []
    for t in targets:
        case, base = by_name.get(t.case), by_name.get(t.versus)
        ratio = base["median_ms"] / case["median_ms"] if case and base else None
        out.append(
            {
                "text": t.text,
                "case": t.case,
                "versus": t.versus,
                "required_ratio": t.min_ratio,
                "ratio": ratio,
                "met": None if ratio is None else ratio >= t.min_ratio,
            }
        )
    return out


def report_ratios(rows: list[dict], ratios: tuple[Ratio, ...]) -> list[dict]:
    """Each reported ratio (None: a case is missing); no verdict."""
    by_name = {r["name"]: r for r in rows}
    out = []
    for q in ratios:
        case, base = by_name.get(q.case), by_name.get(q.versus)
        ratio = base["median_ms"] / case["median_ms"] if case and base else None
        out.append({"text": q.text, "case": q.case, "versus": q.versus, "ratio": ratio})
    return out


def every_group_checks(
    groups: list[dict], profile: str, targets: tuple[Target, ...] = EVERY_GROUP
) -> list[dict]:
    """Each across-groups target over the quiet groups holding both of its cases.

    ``worst`` is the group with the lowest ratio; ``met`` is None when no group
    has both cases; ``judged`` says whether this profile is the one the target
    is judged on (the full sweep); other profiles only indicate.
    """
    out = []
    for t in targets:
        measured = []
        for g in groups:
            if g.get("quiet_label"):
                continue
            by_name = {r["name"]: r for r in g["rows"]}
            case, base = by_name.get(t.case), by_name.get(t.versus)
            if case and base and case["median_ms"] > 0:
                measured.append((base["median_ms"] / case["median_ms"], g["label"]))
        worst = min(measured) if measured else None
        out.append(
            {
                "text": t.text,
                "case": t.case,
                "versus": t.versus,
                "required_ratio": t.min_ratio,
                "groups": len(measured),
                "below": [label for ratio, label in measured if ratio < t.min_ratio],
                "worst_ratio": worst[0] if worst else None,
                "worst_group": worst[1] if worst else None,
                "met": None if worst is None else worst[0] >= t.min_ratio,
                "judged": profile == EVERY_GROUP_PROFILE,
            }
        )
    return out


def noise_floor(groups: list[dict], under_load: bool = False) -> dict | None:
    """How far apart two instances of one configuration read in this run.

    Where ``auto`` chose the executor and threads of a fixed case of its group,
    the two rows time the same configuration (two env instances, interleaved):
    their ratio (fixed median / auto median) is the bench's own noise. Over
    the quiet groups, or the contention groups with ``under_load``; None when
    none has such a pair.
    """
    ratios = []
    for g in groups:
        if bool(g.get("quiet_label")) != under_load:
            continue
        by_name = {r["name"]: r for r in g["rows"]}
        auto = by_name.get("auto")
        twin = by_name.get(auto.get("choice")) if auto else None
        if twin is not None and auto["median_ms"] > 0:
            ratios.append(twin["median_ms"] / auto["median_ms"])
    if not ratios:
        return None
    lo, hi = np.percentile(ratios, [25, 75])
    return {
        "pairs": len(ratios),
        "min_ratio": min(ratios),
        "max_ratio": max(ratios),
        "quartiles": [float(lo), float(hi)],
    }


def noise_floor_line(floor: dict) -> str:
    """The noise floor as one line under the targets it qualifies."""
    return (
        f"- Noise floor: in {floor['pairs']} groups `auto` ran the configuration of a fixed "
        f"case; the two instances read {floor['min_ratio']:.2f}-{floor['max_ratio']:.2f}x "
        f"of each other (middle half {floor['quartiles'][0]:.2f}-{floor['quartiles'][1]:.2f}x). "
        "A group ratio nearer its threshold than that spread is within this run's noise."
    )


def is_loaded(machine: dict) -> bool:
    """Whether other processes competed for the CPUs during the run."""
    pressures = [machine.get(k) for k in ("cpu_pressure_start", "cpu_pressure_end")]
    return any(p is not None and p > LOADED for p in pressures)


def _x(value, fmt: str = "{:.2f}x") -> str:
    return fmt.format(value) if value is not None else "-"


def _case_label(r: dict) -> str:
    if r["name"] == "auto":
        return f"auto ({r['choice']})"
    if r.get("kind") == "alternative" and r.get("copies", 1) > 1:
        return f"{r['name']} ({r['copies']} envs, {r['processes']} procs)"
    return r["name"]


def group_table(group: dict) -> list[str]:
    """The Markdown table of one group."""
    rows = group["rows"]
    parts = "policy_median_ms" in rows[0]
    present = [b for b in BASELINES if any(r["name"] == b for r in rows)]
    head = ["case", "median ms", "p95 ms"]
    head += ["policy ms", "env ms"] if parts else []
    head += ["events/s", "vs serial", *(f"vs {b}" for b in present)]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        eps = r.get("events_per_s")
        cells = [_case_label(r), f"{r['median_ms']:.3f}", f"{r['p95_ms']:.3f}"]
        if parts:
            cells += [f"{r.get('policy_median_ms', 0):.3f}", f"{r.get('env_median_ms', 0):.3f}"]
        cells += [f"{eps / 1e6:.2f} M" if eps else "-", _x(r.get("speedup_vs_serial"))]
        cells += [_x(r.get(f"vs_{b}")) for b in present]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def target_lines(group: dict, loaded: bool) -> list[str]:
    """One line per target of the group: measured, required, met."""
    lines = []
    for t in group.get("targets", []):
        if t["ratio"] is None:
            lines.append(f"- {t['text']}: not measured (no `{t['case']}` or `{t['versus']}`)")
            continue
        change = 1.0 / t["ratio"] - 1.0
        verdict = "met" if t["met"] else "**missed**"
        noise = " (loaded machine: not a verdict)" if loaded else ""
        lines.append(
            f"- {t['text']}: {t['ratio']:.2f}x, i.e. latency {abs(change):.0%} "
            f"{'lower' if change <= 0 else 'higher'} "
            f"(needs {t['required_ratio']:.2f}x): {verdict}{noise}"
        )
    return lines


def ratio_lines(group: dict) -> list[str]:
    """One line per reported ratio of the group (no verdict: not a target)."""
    return [
        f"- {q['text']}: {_x(q['ratio'])} (reported, not a target)" for q in group.get("ratios", [])
    ]


def every_group_lines(checks: list[dict], loaded: bool) -> list[str]:
    """One line per across-groups target: worst group, how many below, verdict."""
    lines = []
    for c in checks:
        if c["met"] is None:
            lines.append(
                f"- {c['text']}: not measured (no group has `{c['case']}` and `{c['versus']}`)"
            )
            continue
        verdict = "met" if c["met"] else "**missed**"
        if not c["judged"]:
            verdict = f"{'holds' if c['met'] else 'fails'} here (judged on the "
            verdict += f"`{EVERY_GROUP_PROFILE}` profile)"
        elif loaded:
            verdict += " (loaded machine: not a verdict)"
        lines.append(
            f"- {c['text']}: worst {c['worst_ratio']:.2f}x ({c['worst_group']}), "
            f"{len(c['below'])} of {c['groups']} groups below {c['required_ratio']:.2f}x: "
            f"{verdict}"
        )
    return lines


def regret_lines(regret: list[dict]) -> list[str]:
    """The STPA regret table."""
    if not regret:
        return []
    cols = list(regret[0]["fixed_ms"])
    head = ["group", "events/step", *cols, "auto", "choice", "best", "regret"]
    head += ["choice regret", "vs serial", "preflight s"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in regret:
        ev = r["events_per_step"]
        cells = [r["label"], f"{ev:.0f}" if ev is not None else "-"]
        cells += [f"{r['fixed_ms'][c]:.3f}" if c in r["fixed_ms"] else "-" for c in cols]
        cells += [f"{r['auto_ms']:.3f}", r["choice"], r["best"], f"{r['regret']:+.1%}"]
        cr = r["choice_regret"]
        cells += [f"{cr:+.1%}" if cr is not None else "-", f"{r['vs_serial']:+.1%}"]
        pf = r["preflight_s"]
        cells.append(f"{pf:.3f}" if pf is not None else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def auto_vs_best(group: dict) -> float | None:
    """Best fixed choice's median / auto's median (serial and parallel cases)."""
    rows = group["rows"]
    auto = next((r for r in rows if r["name"] == "auto"), None)
    fixed = [
        r["median_ms"]
        for r in rows
        if r.get("kind") == "executor" and r.get("executor") in ("serial", "parallel")
    ]
    if auto is None or not fixed or auto["median_ms"] <= 0:
        return None
    return min(fixed) / auto["median_ms"]


def contention_lines(results: dict) -> list[str]:
    """Each contention group beside its quiet group: medians, slowdown, ratios; auto's check."""
    loaded = [g for g in results["groups"] if g.get("quiet_label")]
    if not loaded:
        return []
    quiet = {g["label"]: g for g in results["groups"] if not g.get("quiet_label")}
    head = ["group", "case", "quiet ms", "under load ms", "slowdown", "vs serial quiet"]
    head += ["vs serial under load"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    checks = []
    for g in loaded:
        calm = {r["name"]: r for r in quiet.get(g["quiet_label"], {"rows": []})["rows"]}
        for r in g["rows"]:
            q = calm.get(r["name"])
            cells = [g["quiet_label"], _case_label(r), f"{q['median_ms']:.3f}" if q else "-"]
            cells += [f"{r['median_ms']:.3f}"]
            cells += [_x(r["median_ms"] / q["median_ms"]) if q else "-"]
            cells += [_x(q.get("speedup_vs_serial")) if q else "-", _x(r.get("speedup_vs_serial"))]
            lines.append("| " + " | ".join(cells) + " |")
        ratio = auto_vs_best(g)
        if ratio is not None:
            verdict = "met" if ratio >= AUTO_VS_BEST_UNDER_LOAD else "**missed**"
            checks.append(
                f"- {g['quiet_label']}: auto {ratio:.2f}x the best fixed choice under load "
                f"(needs {AUTO_VS_BEST_UNDER_LOAD:.2f}x): {verdict}"
            )
        checks += [f"- {g['quiet_label']}: {line[2:]}" for line in target_lines(g, False)]
    busy = loaded[0].get("busy_processes")
    intro = (
        f"Each case again with {busy} busy processes (one per usable CPU) started and stopped "
        "by the bench; `slowdown` is under load / quiet (quiet: the group of the same label "
        "in this run; `-` when it did not run). The machine's end-of-run load figures above "
        "were taken before these groups."
    )
    return [intro, "", *lines, "", *checks]


def machine_line(m: dict) -> str:
    """Who measured: CPU, usable threads, affinity, load."""
    return (
        f"Machine: {m['cpu_model']}, {m['usable_threads']} usable threads "
        f"({m['physical_cores']} physical cores, affinity {m['affinity']}, "
        f"cgroup quota {m['cgroup_quota_cpus']}); load average {m['load_start']} at start, "
        f"{m['load_end']} at end; CPU pressure {m['cpu_pressure_start']} / "
        f"{m['cpu_pressure_end']}; Python {m['python']}."
    )


def markdown(results: dict) -> str:
    """Machine, one table per group (with its targets), STPA regret, memory, callgrind."""
    m = results["machine"]
    loaded = is_loaded(m)
    took = f"Profile `{results['profile']}`, {results.get('seconds', 0):.0f} s. "
    lines = [took + machine_line(m), ""]
    if loaded:
        lines += [
            "**Loaded machine**: other processes competed for the CPUs during this run, "
            "so thread-count comparisons are noise-dominated; ratios between single-threaded "
            "cases hold better. The callgrind line does not depend on load.",
            "",
        ]
    lines += [
        "Ratios are `other median / this median`: above 1 this case is that many times "
        "faster than the other.",
        "",
    ]
    for group in results["groups"]:
        sampled = ""
        if "rounds" in group:
            sampled = f" {group['rounds']} rounds x {group['steps_per_turn']} steps per case."
        lines += [f"### {group['label']}", ""]
        if not group["rows"]:  # every case left out (a missing optional package): the notes say
            lines += [f"Skipped: {n}" for n in group.get("notes", [])] + [""]
            continue
        lines += [f"Latency of one {group['metric']}.{sampled}", ""]
        lines += group_table(group)
        lines += [""] + [f"Note: {n}" for n in group.get("notes", [])]
        lines += target_lines(group, loaded)
        lines += ratio_lines(group)
        lines.append("")
    checks = results.get("every_group")
    if checks is None:
        checks = every_group_checks(results["groups"], results.get("profile", ""))
    if any(c["met"] is not None for c in checks):
        lines += ["### Across groups (quiet groups holding both cases)", ""]
        lines += every_group_lines(checks, loaded)
        floor = results.get("noise_floor")
        lines += ([noise_floor_line(floor)] if floor else []) + [""]
    under_load = contention_lines(results)
    if under_load:
        lines += ["### Under load: the contention groups beside the quiet ones", ""]
        floor = results.get("noise_floor_under_load")
        lines += under_load + ([noise_floor_line(floor)] if floor else []) + [""]
    if results.get("regret"):
        lines += ["### STPA regret (auto vs every fixed choice, median ms)", ""]
        lines += regret_lines(results["regret"]) + [""]
    if results.get("memory"):
        lines += ["### Memory: RSS per pending event (a fresh process per case)", ""]
        lines += memory.table(results["memory"]) + [""]
    cg = results.get("callgrind")
    if cg:
        lines += ["### Cost model: callgrind instructions per event", ""]
        if cg.get("skipped"):
            lines.append(f"Skipped: {cg['skipped']}")
        else:
            lines.append(f"{cg['workload']}:")
            lines += [""] + [
                f"- {r['executor']}: {r['instructions_per_event']:.0f} instructions/event"
                for r in cg["rows"]
            ]
        lines.append("")
    return "\n".join(lines)


def write(results: dict, out_dir: str) -> list[str]:
    """Write every output file; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    json_path = os.path.join(out_dir, "results.json")
    md_path = os.path.join(out_dir, "results.md")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    with open(md_path, "w") as f:
        f.write(markdown(results))
    return [json_path, md_path, *plots.write_all(results, out_dir)]
