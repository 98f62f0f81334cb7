"""``options["reset_mask"]``: which instances a vector env's ``reset()`` resets.

One check for both vector envs (``SeerVectorEnv`` and ``SeerAsyncVectorEnv``):
booleans or 0/1, one value per instance or one per row (agent); a per-row
mask must select whole instances. Any other value (2, -1, 0.5, NaN, a
string) is a mistake, not "true", and is refused before anything resets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["instance_mask"]


def instance_mask(mask: Any, num_instances: int, agents_per_instance: int) -> np.ndarray:
    """The bool mask over instances that ``options["reset_mask"]`` selects.

    Args:
        mask: the user's mask: ``num_instances`` values, or ``num_instances *
            agents_per_instance`` (one per row).
        num_instances: instances of the vector env.
        agents_per_instance: rows per instance.

    Returns:
        np.ndarray: a fresh bool array of shape ``(num_instances,)``.

    Raises:
        ValueError: a value other than a boolean or 0/1, a wrong shape, or a
            per-row mask that splits an instance.
    """
    try:
        raw = np.asarray(mask)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise ValueError(f"options['reset_mask'] must hold booleans or 0/1, got {mask!r}") from exc
    if raw.dtype != bool:
        flat = raw.ravel()
        numeric = raw.dtype.kind in "iuf"
        bad = flat[~np.isin(flat, (0, 1))] if numeric else flat
        if bad.size:
            raise ValueError(
                f"options['reset_mask'] must hold booleans or 0/1, got {bad[:5].tolist()!r}"
            )
    m, a = num_instances, agents_per_instance
    chosen = raw.astype(bool)
    if chosen.shape == (m,):
        return chosen
    if chosen.shape == (m * a,):
        per = chosen.reshape(m, a)
        if not np.all(per.all(axis=1) == per.any(axis=1)):
            raise ValueError("options['reset_mask'] must select whole instances (all rows alike)")
        return per[:, 0].copy()
    raise ValueError(
        f"options['reset_mask'] must have shape ({m},) or ({m * a},), got {chosen.shape}"
    )
