"""``python -m seer_env.bench_stpa``: how close does ``num_threads="auto"`` get to the best size?

For each configuration of a sweep (PHOLD small/large at several compute
intensities and lookaheads, pcs_v0 at several sizes and loads), STPA decides
afresh (cache off, its preflight timed), then the auto-configured instance and
one instance per fixed choice (serial, parallel at 1..usable threads) are
stepped in interleaved turns from the same state. Printed per configuration:
median step latency of each, the regret ``auto / best - 1`` and ``auto /
serial - 1``. The issue's target: regret <= 10% and never > 5% worse than
serial.

Options: ``--quick`` (fewer configurations and repeats), ``--json PATH``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from collections.abc import Callable

import numpy as np

import seer_env
from seer_env import stpa
from seer_env.envs import pcs_v0
from seer_env.stpa import hardware
from seer_env.stpa.cache import DecisionCache
from seer_env.stpa.preflight import _POOL_SPIN_S


@dataclasses.dataclass
class Workload:
    """One configuration: how to build a stepper for a given (executor, threads)."""

    label: str
    model: str
    config: dict
    build: Callable[[str, int], Callable[[], None]]  # -> step()


def phold(label: str, **config) -> Workload:
    """PHOLD through ``Simulation`` (no agents: only the runtime is timed)."""

    def build(executor: str, threads: int) -> Callable[[], None]:
        sim = seer_env.Simulation("phold", config, executor=executor, num_threads=threads)
        sim.reset(0)
        none = np.zeros(0, dtype=np.int64)
        return lambda: sim.step(none)

    return Workload(label, "phold", config, build)


def pcs(label: str, **config) -> Workload:
    """pcs_v0 through the array fast path (what a vectorized trainer calls)."""
    model_config = pcs_v0.parallel_env(**config)._model_config  # what STPA keys on

    def build(executor: str, threads: int) -> Callable[[], None]:
        env = pcs_v0.parallel_env(
            **config, executor=executor, num_threads=threads, max_cycles=10**9
        )
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        actions = rng.integers(0, env.action_space(env.possible_agents[0]).n, env.max_num_agents)
        return lambda: env.step_arrays(actions)

    return Workload(label, "pcs", model_config, build)


def sweep(quick: bool) -> list[Workload]:
    """The configurations: small and large, light and heavy, few and many rounds."""
    items = [
        phold("phold tiny 64", num_entities=64),
        phold("phold 1k", num_entities=1024),
        phold("phold 1k work=500", num_entities=1024, work=500),
        phold("phold 64k", num_entities=65536),
        pcs("pcs 16x16", width=16, height=16),
        pcs("pcs 32x32", width=32, height=32),
    ]
    if not quick:
        items += [
            phold("phold 1k L=0.01", num_entities=1024, lookahead=0.01),
            phold("phold 16k work=2000", num_entities=16384, work=2000),
            phold("phold 64k work=200", num_entities=65536, work=200),
            pcs("pcs 8x8", width=8, height=8),
            pcs("pcs 32x32 x4 phones", width=32, height=32, phones_per_cell=64),
            pcs("pcs 64x64", width=64, height=64),
        ]
    return items


def fixed_choices(max_threads: int) -> list[tuple[str, int]]:
    """Every fixed choice STPA could make here: serial and parallel at 1..max_threads."""
    return [("serial", 1)] + [("parallel", p) for p in range(1, max_threads + 1)]


def time_interleaved(
    steppers: dict[str, Callable[[], None]], rounds: int, steps: int
) -> dict[str, float]:
    """Median step latency of each stepper; turns rotate, idle pools park between turns."""
    samples: dict[str, list[float]] = {k: [] for k in steppers}
    names = list(steppers)
    for name in names:  # warm-up: pools started, caches and free lists filled
        for _ in range(2):
            steppers[name]()
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            time.sleep(_POOL_SPIN_S)
            steppers[name]()  # wakes this pool; not timed
            for _ in range(steps):
                start = time.perf_counter()
                steppers[name]()
                samples[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in samples.items()}


def run(workload: Workload, max_threads: int, rounds: int, steps: int) -> dict:
    """Decide with STPA, then time auto against every fixed choice."""
    decision = stpa.choose(workload.model, workload.config, cache=DecisionCache(None))
    auto = (decision.executor, decision.num_threads)
    steppers = {"auto": workload.build(*auto)}
    for executor, threads in fixed_choices(max_threads):
        name = "serial" if executor == "serial" else f"x{threads}"
        steppers[name] = workload.build(executor, threads)
    medians = time_interleaved(steppers, rounds, steps)
    fixed = {k: v for k, v in medians.items() if k != "auto"}
    best = min(fixed, key=fixed.get)
    return {
        "label": workload.label,
        "auto": "serial" if auto[0] == "serial" else f"x{auto[1]}",
        "medians_s": medians,
        "best": best,
        "regret_vs_best": medians["auto"] / fixed[best] - 1.0,
        # The same, for the fixed instance that matches auto's choice: the cost
        # of the decision without the noise between two identical instances.
        "choice_regret": fixed["serial" if auto[0] == "serial" else f"x{auto[1]}"] / fixed[best]
        - 1.0,
        "vs_serial": medians["auto"] / fixed["serial"] - 1.0,
        "preflight_s": decision.report.get("preflight_seconds"),
        "events_per_step": decision.report.get("trace", {}).get("events_per_step"),
        "reason": decision.report["reason"],
    }


def table(rows: list[dict]) -> str:
    """A Markdown table of the results (latencies in microseconds)."""
    cols = [k for k in rows[0]["medians_s"] if k != "auto"]
    head = [
        "config",
        "events/step",
        *cols,
        "auto",
        "choice",
        "best",
        "regret",
        "choice regret",
        "vs serial",
        "pf s",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        m = r["medians_s"]
        ev = r["events_per_step"]
        lines.append(
            "| "
            + " | ".join(
                [
                    r["label"],
                    f"{ev:.0f}" if ev is not None else "-",
                    *(f"{m[c] * 1e6:.0f}" for c in cols),
                    f"{m['auto'] * 1e6:.0f}",
                    r["auto"],
                    r["best"],
                    f"{r['regret_vs_best']:+.1%}",
                    f"{r['choice_regret']:+.1%}",
                    f"{r['vs_serial']:+.1%}",
                    f"{r['preflight_s']:.3f}" if r["preflight_s"] is not None else "-",
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    """Run the sweep and print the regret table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer configurations and repeats")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved turns per choice")
    parser.add_argument("--steps", type=int, default=3, help="timed steps per turn")
    parser.add_argument("--only", default=None, help="configurations whose label contains this")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    features = hardware.machine_features()
    max_threads = features["usable_threads"]
    rounds = args.rounds or (5 if args.quick else 9)
    print(
        f"STPA regret: {features['cpu_model']}, {max_threads} usable threads, "
        f"{features['physical_cores']} cores; {rounds} turns x {args.steps} steps; "
        f"latencies are median us per step"
    )
    rows = []
    for workload in sweep(args.quick):
        if args.only and args.only.lower() not in workload.label.lower():
            continue
        rows.append(run(workload, max_threads, rounds, args.steps))
        r = rows[-1]
        regret = r["regret_vs_best"]
        print(f"  {r['label']}: auto={r['auto']} best={r['best']} regret {regret:+.1%}")
    print()
    print(table(rows))
    worst = max(r["regret_vs_best"] for r in rows)
    worst_serial = max(r["vs_serial"] for r in rows)
    worst_choice = max(r["choice_regret"] for r in rows)
    print(
        f"\nworst regret vs best {worst:+.1%} (of the choice itself {worst_choice:+.1%}); "
        f"worst vs serial {worst_serial:+.1%}"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"features": features, "rows": rows}, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
