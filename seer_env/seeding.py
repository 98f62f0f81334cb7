"""Episode seeds: which seed the next ``reset()`` uses.

Shared by the env, the vector env and the pure-Python references, so that a
reference reset the same way as an env starts from the same seed.
"""

from __future__ import annotations

import numpy as np

_MASK64 = 2**64 - 1


def next_episode_seed(seed: int) -> int:
    """Deterministic successor of an episode seed (splitmix64 step).

    ``reset()`` without a seed continues from the previous episode's seed this
    way, so two envs reset with the same seed stay identical through any
    number of unseeded resets (autoreset paths call ``reset()`` bare).
    """
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def episode_seed(requested: int | None, previous: int | None, configured: int | None) -> int:
    """The seed of the next episode.

    ``requested`` (``reset(seed=...)``) wins; else the successor of the
    previous episode's seed (``reset()`` continues the stream); else the
    constructor's ``seed``; else fresh OS entropy.
    """
    if requested is not None:
        return requested
    if previous is not None:
        return next_episode_seed(previous)
    if configured is not None:
        return configured
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
