"""``reset(seed=...)`` of a vector env: one seed per instance.

One rule for the vector envs that reset instance by instance
(``SeerVectorEnv``, ``SeerDecisionVectorEnv``): ``None`` leaves each instance
to its own seed sequence, an int ``s`` seeds instance ``i`` with ``s + i``
(mod 2**64), a list gives each instance its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seer_env.validation import validate_seed

__all__ = ["instance_seeds"]


def instance_seeds(seed: Any, num_instances: int) -> list[int | None]:
    """The seed of each instance (None: not given), checked like ``reset(seed=)``'s.

    Raises:
        ValueError: a list of another length, or a seed ``validate_seed`` refuses.
    """
    if seed is None:
        return [None] * num_instances
    if isinstance(seed, (list, tuple, np.ndarray)):
        if len(seed) != num_instances:
            raise ValueError(
                f"seed must be an int or a list of {num_instances} seeds, got {len(seed)}"
            )
        return [validate_seed(s) for s in seed]
    base = validate_seed(seed)
    return [(base + i) % 2**64 for i in range(num_instances)]
