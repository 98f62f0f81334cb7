"""The seer side of the peer comparison: ``python -m bench.peers.seer_runner``.

Steps our ``Simulation("pcs")`` or ``Simulation("phold")`` to the end time with
the configuration the peer runners use, then prints a PEER line (``peerline``).
Options are those of the C runners (``--width=64 --end=3000 --seed=0 ...``),
plus ``--executor`` (``serial`` or ``parallel``) and ``--threads``.

What is timed: ``reset(seed)`` (the phones' or tokens' first events, as each
engine's init) and ``run_until(end)``, as env steps: PCS steps of
``--step-minutes`` (60, pcs_v0's hour) and PHOLD steps of ``dt`` = 1, no
actions (no guard channels). Each boundary computes the observations, rewards
and counters of every cell, which an engine run to an end time does not: a cost
only seer pays. Events before the end time are committed, as in the engines.
"""

from __future__ import annotations

import argparse
import sys
import time

from bench.peers.peerline import format_line

PCS_KEYS = ("call_attempts", "blocks", "busy_lines", "handoffs", "dropped_handoffs")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The C runners' options (pcs_types.h / phold_types.h defaults), plus the executor."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=("pcs", "phold"), required=True)
    p.add_argument("--executor", choices=("serial", "parallel"), default="serial")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--end", type=float, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--width", type=int, default=32)
    p.add_argument("--height", type=int, default=32)
    p.add_argument("--channels", type=int, default=10)
    p.add_argument("--phones", type=int, default=16)
    p.add_argument("--call-interval", type=float, default=360.0)
    p.add_argument("--call-duration", type=float, default=180.0)
    p.add_argument("--move-interval", type=float, default=4500.0)
    p.add_argument("--handoff-delay", type=float, default=1.0)
    p.add_argument("--step-minutes", type=float, default=60.0)
    p.add_argument("--entities", type=int, default=1024)
    p.add_argument("--population", type=int, default=1)
    p.add_argument("--remote", type=float, default=0.25)
    p.add_argument("--mean", type=float, default=1.0)
    p.add_argument("--lookahead", type=float, default=0.1)
    return p.parse_args(argv)


def model_config(args: argparse.Namespace) -> dict:
    """The Simulation config matching the peer runners' options."""
    if args.model == "pcs":
        return dict(
            width=args.width,
            height=args.height,
            channels=args.channels,
            phones_per_cell=args.phones,
            call_interval=args.call_interval,
            call_duration=args.call_duration,
            move_interval=args.move_interval,
            handoff_delay=args.handoff_delay,
            step_minutes=args.step_minutes,
        )
    return dict(
        num_entities=args.entities,
        population=args.population,
        remote=args.remote,
        mean=args.mean,
        lookahead=args.lookahead,
        dt=1.0,
    )


def run(args: argparse.Namespace) -> dict:
    """Build, time reset + run_until, return the PEER line's fields."""
    import seer_env  # here: --help needs no extension build

    threads = 1 if args.executor == "serial" else args.threads
    sim = seer_env.Simulation(
        args.model,
        model_config(args),
        executor=args.executor,
        num_threads=threads,
    )
    start = time.perf_counter()
    sim.reset(args.seed)
    sim.run_until(args.end)
    wall = time.perf_counter() - start
    size = f"{args.width}x{args.height}" if args.model == "pcs" else str(args.entities)
    fields = {
        "engine": "seer",
        "mode": args.executor,
        "threads": threads,
        "model": args.model,
        "size": size,
        "end_time": args.end,
        "seed": args.seed,
        "committed_events": sim.events_processed,
        "wall_s": round(wall, 6),
    }
    if args.model == "pcs":
        totals = sim.totals()
        fields.update({k: totals[k] for k in PCS_KEYS})
        calls = totals["call_attempts"] - totals["busy_lines"]
        fields["calls"] = calls
        lost = totals["blocks"] + totals["dropped_handoffs"]
        fields["blocking_probability"] = round(lost / calls, 9) if calls else 0.0
    sim.release_threads()
    return fields


def main(argv: list[str] | None = None) -> None:
    """Run once and print the PEER line."""
    print(format_line(run(parse_args(argv))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
