"""Event-driven decisions against the lockstep step of the same PCS config.

``pcs_admission`` with every arrival admitted runs the traffic of ``pcs_v1``
with no guard channels (the same draws in the same order: the totals line
checks it), plus one decision and one ADMIT event per arrival that found a
channel free. Per executor (serial, parallel-2), stepped in turns with the
lockstep twin and an A/A lockstep copy (the noise floor), each over the same
seeds:

- ``lockstep ms/step``: ``Simulation.step`` of pcs_v1, guard 0;
- ``runtime ms/step``: the time inside ``advance()``/``answer()`` of the
  decisions run (the policy and the Python between calls excluded), and per
  event (its events include the ADMIT ones);
- ``python us/return``: the time between those calls per return to Python
  (reading requests and observations, building the answer): what a trainer's
  own loop adds at each window, reported apart;
- decisions/s and events/s of the runtime, and the policy batch sizes the
  windows give (percentiles).

    python -m bench.decisions                    # 64x64, 12 steps x 5 rounds
    python -m bench.decisions --size 32 --rounds 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from seer_env import _core

EXECUTORS = (("serial", 1), ("parallel", 2))


def lockstep_run(config: dict, executor: str, threads: int, seed: int, steps: int) -> dict:
    """pcs_v1 with guard 0 stepped ``steps`` times: its step seconds, events and totals."""
    sim = _core.Simulation("pcs_v1", config, executor=executor, num_threads=threads)
    sim.reset(seed)
    guard = np.zeros(sim.spec["num_agents"], dtype=np.int64)
    seconds = 0.0
    for _ in range(steps):
        start = time.perf_counter()
        sim.step(guard)
        seconds += time.perf_counter() - start
    return {"seconds": seconds, "events": sim.events_processed, "totals": sim.totals()}


def decisions_run(config: dict, executor: str, threads: int, seed: int, steps: int) -> dict:
    """pcs_admission admitting every arrival for ``steps`` steps: runtime and Python time apart."""
    sim = _core.Simulation("pcs_admission", config, executor=executor, num_threads=threads)
    sim.reset(seed)
    runtime = python = 0.0
    returns = decisions = 0
    batches: list[int] = []
    admit = np.ones(sim.spec["num_agents"], dtype=np.int64)
    mark = time.perf_counter()
    while sim.steps < steps:
        now = time.perf_counter()
        python += now - mark
        progress = sim.advance()
        mark = time.perf_counter()
        runtime += mark - now
        if progress == "boundary":
            continue
        returns += 1
        agents, _ = sim.requests()
        while len(agents):
            sim.observations()  # what a policy reads
            batches.append(len(agents))
            decisions += len(agents)
            rows = admit[: len(agents)]
            now = time.perf_counter()
            python += now - mark
            sim.answer(rows)
            mark = time.perf_counter()
            runtime += mark - now
            agents, _ = sim.requests()
    return {
        "seconds": runtime,
        "python_seconds": python,
        "events": sim.events_processed,
        "returns": returns,
        "decisions": decisions,
        "batches": batches,
        "totals": sim.totals(),
    }


def measure(size: int, steps: int, rounds: int, seed: int) -> dict:
    """Every executor's rows: the three cases in rotated turns over ``rounds`` seeds."""
    config = {"width": size, "height": size}
    rows = {}
    for executor, threads in EXECUTORS:
        runs: dict[str, list[dict]] = {"lockstep": [], "aa": [], "decisions": []}
        for r in range(rounds):
            # Rotated order: no case always runs first (a warm cache, a quiet moment).
            order = ["lockstep", "decisions", "aa"]
            order = order[r % 3 :] + order[: r % 3]
            for case in order:
                run = decisions_run if case == "decisions" else lockstep_run
                runs[case].append(run(config, executor, threads, seed + r, steps))
        lock, dec, aa = runs["lockstep"], runs["decisions"], runs["aa"]
        same = [
            {
                k: lo["totals"][k]
                for k in ("call_attempts", "blocks", "handoffs", "dropped_handoffs")
            }
            == {
                k: d["totals"][k]
                for k in ("call_attempts", "blocks", "handoffs", "dropped_handoffs")
            }
            for lo, d in zip(lock, dec)
        ]
        per_step = [d["seconds"] / steps for d in dec]
        lock_step = [x["seconds"] / steps for x in lock]
        batches = np.concatenate([np.asarray(d["batches"]) for d in dec])
        rows[f"{executor}-{threads}"] = {
            "lockstep_ms_per_step": statistics.median(lock_step) * 1e3,
            "runtime_ms_per_step": statistics.median(per_step) * 1e3,
            "step_ratio": statistics.median(p / q for p, q in zip(per_step, lock_step)),
            "noise_floor": statistics.median(a["seconds"] / x["seconds"] for a, x in zip(aa, lock)),
            "lockstep_ns_per_event": statistics.median(x["seconds"] / x["events"] for x in lock)
            * 1e9,
            "runtime_ns_per_event": statistics.median(d["seconds"] / d["events"] for d in dec)
            * 1e9,
            "event_ratio": statistics.median(
                (d["seconds"] / d["events"]) / (x["seconds"] / x["events"])
                for d, x in zip(dec, lock)
            ),
            "python_us_per_return": statistics.median(
                d["python_seconds"] / d["returns"] for d in dec
            )
            * 1e6,
            "returns_per_step": statistics.median(d["returns"] / steps for d in dec),
            "decisions_per_s": statistics.median(d["decisions"] / d["seconds"] for d in dec),
            "events_per_s": statistics.median(d["events"] / d["seconds"] for d in dec),
            "batch_percentiles": {
                str(p): float(np.percentile(batches, p)) for p in (5, 25, 50, 75, 95)
            },
            "spread_step_ratio": [
                min(p / q for p, q in zip(per_step, lock_step)),
                max(p / q for p, q in zip(per_step, lock_step)),
            ],
            "same_traffic_as_lockstep": all(same),
        }
    return {"size": size, "steps": steps, "rounds": rounds, "seed": seed, "rows": rows}


def report(result: dict) -> str:
    """The Markdown table of ``measure``'s result."""
    lines = [
        f"PCS {result['size']}x{result['size']}, {result['steps']} steps x {result['rounds']} "
        "rounds, medians (pcs_admission admitting every arrival vs pcs_v1 with guard 0)",
        "| executor | lockstep ms/step | runtime ms/step | ratio | ns/event lockstep | "
        "ns/event decisions | ratio | python us/return | returns/step | decisions/s | "
        "batch p5/p50/p95 | A/A | same traffic |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in result["rows"].items():
        b = r["batch_percentiles"]
        lines.append(
            f"| {name} | {r['lockstep_ms_per_step']:.2f} | {r['runtime_ms_per_step']:.2f} | "
            f"{r['step_ratio']:.2f} | {r['lockstep_ns_per_event']:.0f} | "
            f"{r['runtime_ns_per_event']:.0f} | {r['event_ratio']:.2f} | "
            f"{r['python_us_per_return']:.1f} | {r['returns_per_step']:.1f} | "
            f"{r['decisions_per_s']:.3g} | {b['5']:.0f}/{b['50']:.0f}/{b['95']:.0f} | "
            f"{r['noise_floor']:.2f} | {r['same_traffic_as_lockstep']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args(argv)
    result = measure(args.size, args.steps, args.rounds, args.seed)
    print(report(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
