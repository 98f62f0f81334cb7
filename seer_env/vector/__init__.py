"""Gymnasium vector envs over many instances of one seer_env env.

- :class:`SeerVectorEnv` (``make``): every instance stepped in one C++ call
  (``seer_env.vector.sync``);
- :class:`SeerAsyncVectorEnv` (``make_async``): the instances in batches, each
  stepped in the background while Python computes another batch's actions
  (``seer_env.vector.asynchronous``);
- :class:`SeerDecisionVectorEnv` (``make`` of a model whose agents act when
  their events ask): ``[instances, agents]`` arrays with a ``needs_action``
  mask (``seer_env.vector.decisions``, docs/decisions.md).
"""

from __future__ import annotations

from typing import Any

from seer_env.models.numba import NumbaModel
from seer_env.vector.asynchronous import SeerAsyncVectorEnv
from seer_env.vector.decisions import SeerDecisionVectorEnv, declares_decisions
from seer_env.vector.sync import SeerVectorEnv

__all__ = ["SeerAsyncVectorEnv", "SeerDecisionVectorEnv", "SeerVectorEnv", "make", "make_async"]


def make(
    name: str | type[NumbaModel],
    num_instances: int | None = None,
    *,
    num_envs: int | None = None,
    **config: Any,
) -> SeerVectorEnv | SeerDecisionVectorEnv:
    """``num_instances`` instances of env ``name`` as one Gymnasium VectorEnv (``sync``'s doc).

    The vector env's ``num_envs`` attribute counts rows (agents of every
    instance), as Gymnasium's wrappers expect; the ``num_envs=`` keyword is the
    deprecated name of ``num_instances`` (``seer_env.vector.instance_count``).
    ``name`` may also be a ``seer_env.NumbaModel`` subclass (compiled): ``config``
    then holds its parameters and the runtime options (``seer_env.options``).
    A model whose agents act when their events ask (``pcs_admission_v0``, a
    model that declares ``decisions``) gives a ``SeerDecisionVectorEnv``
    (``seer_env.vector.decisions``): ``[instances, agents]`` arrays and a
    ``needs_action`` mask.
    """
    if declares_decisions(name):
        return SeerDecisionVectorEnv(name, num_instances, num_envs=num_envs, **config)
    return SeerVectorEnv(name, num_instances, num_envs=num_envs, **config)


def make_async(
    name: str,
    num_instances: int | None = None,
    num_batches: int = 2,
    *,
    num_envs: int | None = None,
    **config: Any,
) -> SeerAsyncVectorEnv:
    """``num_instances`` instances of ``name`` in ``num_batches`` async batches (see there).

    Lockstep envs only: a model whose agents act when their events ask is a
    ValueError (``make`` steps it).
    """
    if declares_decisions(name):
        raise ValueError(
            f"make_async steps models whose live agents all act at every step; {name!r} has its "
            "agents act when their events ask (decisions): seer_env.vector.make(name, ...) "
            "gives its SeerDecisionVectorEnv"
        )
    return SeerAsyncVectorEnv(name, num_instances, num_batches, num_envs=num_envs, **config)
