"""Gymnasium vector envs over many instances of one seer_env env.

- :class:`SeerVectorEnv` (``make``): every instance stepped in one C++ call
  (``seer_env.vector.sync``);
- :class:`SeerAsyncVectorEnv` (``make_async``): the instances in batches, each
  stepped in the background while Python computes another batch's actions
  (``seer_env.vector.asynchronous``).
"""

from __future__ import annotations

from typing import Any

from seer_env.models.numba import NumbaModel
from seer_env.vector.asynchronous import SeerAsyncVectorEnv
from seer_env.vector.sync import SeerVectorEnv

__all__ = ["SeerAsyncVectorEnv", "SeerVectorEnv", "make", "make_async"]


def make(
    name: str | type[NumbaModel],
    num_instances: int | None = None,
    *,
    num_envs: int | None = None,
    **config: Any,
) -> SeerVectorEnv:
    """``num_instances`` instances of env ``name`` as one Gymnasium VectorEnv (``sync``'s doc).

    The vector env's ``num_envs`` attribute counts rows (agents of every
    instance), as Gymnasium's wrappers expect; the ``num_envs=`` keyword is the
    deprecated name of ``num_instances`` (``seer_env.vector.instance_count``).
    ``name`` may also be a ``seer_env.NumbaModel`` subclass (compiled): ``config``
    then holds its parameters and the runtime options (``seer_env.options``).
    """
    return SeerVectorEnv(name, num_instances, num_envs=num_envs, **config)


def make_async(
    name: str,
    num_instances: int | None = None,
    num_batches: int = 2,
    *,
    num_envs: int | None = None,
    **config: Any,
) -> SeerAsyncVectorEnv:
    """``num_instances`` instances of ``name`` in ``num_batches`` async batches (see there)."""
    return SeerAsyncVectorEnv(name, num_instances, num_batches, num_envs=num_envs, **config)
