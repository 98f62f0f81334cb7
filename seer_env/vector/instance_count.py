"""The vector envs' instance count: ``num_instances``, and the deprecated ``num_envs=`` keyword.

Gymnasium's ``VectorEnv.num_envs`` is the batch size of the arrays a vector
env returns, and Gymnasium's wrappers (``RecordEpisodeStatistics``, ...) size
their buffers from it. In a seer_env vector env a row is one agent of one
instance, so ``venv.num_envs == num_instances * agents_per_instance``. The
constructor argument counts instances: it is ``num_instances`` (also the
second positional argument). ``num_envs=`` as a keyword still means the
instance count, with a DeprecationWarning; it will be removed in a later release.
"""

from __future__ import annotations

import warnings

from seer_env.validation import validate_int

__all__ = ["MAX_INSTANCES", "resolve_num_instances"]

MAX_INSTANCES = 65536


def resolve_num_instances(num_instances: int | None, num_envs: int | None) -> int:
    """The validated instance count from ``num_instances`` or the deprecated ``num_envs``.

    Raises:
        ValueError: neither or both given, or the count is not an int in 1..65536.
    """
    if num_envs is not None:
        if num_instances is not None:
            raise ValueError(
                f"pass num_instances only, got num_instances={num_instances!r} and "
                f"num_envs={num_envs!r}"
            )
        warnings.warn(
            "num_envs= as the instance count is deprecated: pass num_instances= (or the count "
            "as the second positional argument). The vector env's num_envs attribute counts "
            "agent rows (num_instances * agents_per_instance), as Gymnasium's wrappers expect",
            DeprecationWarning,
            stacklevel=4,
        )
        return validate_int("num_envs", num_envs, 1, MAX_INSTANCES)
    if num_instances is None:
        raise ValueError("num_instances is required: the number of env instances to batch")
    return validate_int("num_instances", num_instances, 1, MAX_INSTANCES)
