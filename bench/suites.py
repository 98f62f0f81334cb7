"""The benchmark profiles: which groups run, at what size and how often.

* ``smoke``: tiny configurations, seconds; checks the machinery (tests use it).
* ``default`` (``make bench``): the target configurations, PHOLD
  small and large, the hot spot, and a few STPA-only groups; about a minute on 2 cores.
* ``full`` (``make bench-full``): sizes swept up to PCS 256x256, Aircraft
  4096 UAVs and PHOLD 65536 entities, and compute / communication intensity.

``default`` and ``full`` end with the contention groups: PCS 64x64 (and, in
``full``, PCS 128x128 and 256x256), Aircraft 1024 and PHOLD 16384 again (serial,
parallel-2, auto) beside one busy process per usable CPU (``contention.py``);
``smoke`` has one tiny such group. Every runtime case's rows in results.json
carry its mean work counters per step (``work_per_step``: events, rounds, ready
entities, queue reads, threads).

The Python-layer groups (``python_layer.py``) time the Python shell instead: dict
API vs arrays, TorchRL batched vs wrapper vs the raw vector env, async vs sync
sampling. Every other group compares serial, parallel at each thread count, locked, barrier
and auto (STPA); PCS and Aircraft groups add the reference env directly, under
``AsyncVectorEnv`` and under SuperSuit; PHOLD groups add the Python reference
where it models the same work. ``stpa`` groups compare only serial, parallel
and auto: they are the STPA regret sweep.
"""

from __future__ import annotations

import numpy as np

from bench import aircraft, branching, pcs, phold, python_layer
from bench.groups import Group


def stpa_groups(quick: bool) -> list[Group]:
    """Configurations where picking the pool size is hard: tiny, huge, many rounds."""
    kw = dict(engines=False, workload="stpa")
    ph = dict(reference=False, **kw)
    groups = [
        phold.group(64, label="STPA: PHOLD 64", **ph),
        phold.group(1024, lookahead=0.01, label="STPA: PHOLD 1k, L=0.01", **ph),
        pcs.group(16, alternatives=False, **kw),
    ]
    if not quick:
        groups += [
            phold.group(1024, 500, label="STPA: PHOLD 1k, work 500", **ph),
            phold.group(65536, 200, label="STPA: PHOLD 64k, work 200", steps=1, **ph),
            pcs.group(8, alternatives=False, **kw),
            pcs.group(32, phones_per_cell=64, alternatives=False, **kw),
        ]
    return groups


def contention_groups(quick: bool) -> list[Group]:
    """The target configurations again, each beside one busy process per usable CPU.

    ``quick``: labelled as in the default profile (else as in the full sweep),
    so each twin finds its quiet group.
    """
    label = "PHOLD large: 16384, ~0.15 us/event" if quick else None
    large = (
        []
        if quick
        else [pcs.group(size, move_interval=450.0, rounds=7, load=True) for size in (128, 256)]
    )
    return [
        pcs.group(64, move_interval=450.0, rounds=7, load=True),
        *large,
        aircraft.group(1024, rounds=7, load=True),
        # 7 rounds of 3 steps, as the other two: 5 single steps were too few
        # samples to read a 10% difference under load.
        phold.group(16384, label=label, rounds=7, load=True),
    ]


def smoke_suite() -> list[Group]:
    """Tiny groups, every kind of case, a couple of samples each."""
    few = dict(rounds=2, steps=1)
    groups = [
        pcs.group(8, targets=True, **few),
        aircraft.group(16, targets=True, **few),
        phold.group(64, **few),
        phold.group(64, label="STPA: PHOLD 64", engines=False, reference=False, **few),
        branching.snapshot_group("pcs", 8, **few),
        branching.fork_group(2, 8, **few),
        pcs.group(8, load=True, **few),
    ]
    groups[3].workload = "stpa"
    for g in groups:
        g.warmup_steps = 1
        g.min_turn_s = 0.0  # seconds in all: a couple of samples, whatever the step costs
    return groups


def hot_spot_group() -> Group:
    """PHOLD with a contiguous hot block: where static partitions cannot balance.

    1/8 of the entities, one contiguous block, burn 20x more per token.
    """
    label = "PHOLD hot spot: 4096, ~0.5 us/event, 1/8 of entities ~8 us"
    return phold.group(4096, 400, label=label, hot_fraction=0.125, hot_work=8000, steps=1)


def default_suite() -> list[Group]:
    """The ``make bench`` profile: a few minutes on 2 cores."""
    return [
        pcs.group(32),
        # The target groups: more rounds, so their medians are steadier.
        pcs.group(64, move_interval=450.0, targets=True, rounds=15),
        aircraft.group(256),
        aircraft.group(1024, targets=True, rounds=10),
        phold.group(1024, label="PHOLD small: 1024, ~0.15 us/event"),
        phold.group(16384, label="PHOLD large: 16384, ~0.15 us/event", steps=1),
        phold.group(4096, 4000, label="PHOLD heavy: 4096, ~5 us/event", steps=1),
        hot_spot_group(),
        *stpa_groups(quick=True),
        *python_layer.groups(quick=True),
        *branching.groups(quick=True),
        *contention_groups(quick=True),
    ]


def full_suite() -> list[Group]:
    """``make bench-full``: sizes and intensities swept (about 5 minutes on 2 cores)."""
    groups = []
    for size in (32, 64, 128, 256):
        for move in (4500.0, 450.0, 45.0):  # communication intensity: handoffs per step
            target = (size, move) == (64, 450.0)
            # A pure-Python step of 256x256 takes tens of seconds: runtime cases only.
            alternatives = size <= 128
            # The large grids' steps take 10-60 ms: 9 rounds of 3 (27 samples a
            # case) where 5 single steps gave verdicts the noise could flip.
            rounds, steps = (5, 3) if size <= 64 else (9, 3)
            groups.append(
                pcs.group(
                    size,
                    move,
                    targets=target,
                    rounds=rounds,
                    steps=steps,
                    alternatives=alternatives,
                )
            )
    for n in (256, 1024, 4096):
        groups.append(aircraft.group(n, targets=n == 1024, steps=3 if n <= 1024 else 1))
    for entities in (1024, 4096, 16384, 65536):
        for work in (0, 400, 4000):  # compute intensity: ~1 ns per unit
            steps = 1 if entities * max(work, 100) > 4096 * 400 else 3
            groups.append(phold.group(entities, work, steps=steps))
    for remote in (0.05, 0.75):  # communication intensity (0.25 is in the sweep above)
        groups.append(phold.group(16384, 400, remote=remote, steps=1))
    groups.append(hot_spot_group())
    return (
        groups
        + stpa_groups(quick=False)
        + python_layer.groups(quick=False)
        + branching.groups(quick=False)
        + contention_groups(quick=False)
    )


SUITES = {"smoke": smoke_suite, "default": default_suite, "full": full_suite}


def random_actions(space, n: int, seed: int) -> np.ndarray:
    """A fixed batch of valid actions for ``n`` agents."""
    rng = np.random.default_rng(seed)
    if hasattr(space, "n"):
        return rng.integers(0, space.n, size=n, dtype=np.int64)
    return rng.uniform(space.low, space.high, size=(n, *space.shape)).astype(np.float32)
