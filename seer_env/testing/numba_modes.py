"""A ``NumbaModel``'s two modes against each other: interpreted and compiled, byte for byte."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from seer_env.testing.arguments import seed_list, step_count, thread_counts
from seer_env.testing.equivalence import assert_serial_equivalent
from seer_env.testing.trajectory import Policy, compare_frames, record


def assert_modes_equivalent(
    model: type,
    config: dict | None = None,
    *,
    seeds: Iterable[int] = (0, 1),
    steps: int = 20,
    threads: Sequence[int] = (1, 2, 4),
    policy: Policy | None = None,
) -> None:
    """Assert a ``NumbaModel`` returns the same bytes interpreted and compiled, at any thread count.

    Per seed, the interpreted run (``compiled=False``, serial) is recorded; the
    compiled model on the serial executor replays its actions and must match
    every boundary output *and the runtime digest* (both modes share the state
    records, so their states, streams and pending events must be equal too).
    Then ``assert_serial_equivalent`` runs the compiled model on every
    executor at every thread count in ``threads``.

    Raises:
        AssertionError: naming the seed, step, output and agent of the first
            difference, with the interpreted value first.
        ValueError: ``seeds=()``, ``threads=()`` or ``steps=0``, naming it.
    """
    from seer_env.env import SeerParallelEnv

    seeds, steps = seed_list(seeds), step_count(steps)
    threads = thread_counts(threads)
    config = dict(config or {})
    for seed in seeds:
        env = SeerParallelEnv(model, {**config, "compiled": False}, num_threads=1)
        reference, actions = record(env, seed, steps, policy=policy)
        env.close()
        env = SeerParallelEnv(model, {**config, "compiled": True}, num_threads=1)
        frames, _ = record(env, seed, steps, actions=actions)
        env.close()
        found = compare_frames(reference, frames)
        if found:
            raise AssertionError(
                f"{model.__name__} compiled differs from interpreted (seed {seed}) at "
                f"{found[0]}: {found[1]}"
            )
    assert_serial_equivalent(
        lambda **kw: SeerParallelEnv(model, {**config, "compiled": True}, **kw),
        seeds=seeds,
        steps=steps,
        threads=threads,
        policy=policy,
    )
