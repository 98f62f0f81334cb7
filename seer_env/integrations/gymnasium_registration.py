"""Gymnasium's registry: ``gymnasium.make("seer_env/pcs_v1")`` and ``gymnasium.make_vec(...)``.

``import seer_env`` registers every env of ``seer_env.env_names()`` under the
``seer_env`` namespace (as ``import ale_py`` registers ``ALE/...``; Gymnasium
1.x loads no plugins by itself). Without the import, name the module in the
id: ``gymnasium.make("seer_env:seer_env/pcs_v1")``.

- ``gymnasium.make("seer_env/pcs_v1", **config)``: one instance as a
  ``gymnasium.Env``, every agent a row (``seer_env.integrations.gymnasium.JointEnv``).
- ``gymnasium.make_vec("seer_env/pcs_v1", num_envs=M, **config)``: ``M``
  instances as one ``SeerVectorEnv`` stepped in one C++ call (the spec's
  ``vector_entry_point``, Gymnasium's default when a spec has one; EnvPool's
  idea). Gymnasium's ``num_envs`` argument counts instances there; the
  returned env's ``num_envs`` attribute counts agent rows, as for
  ``seer_env.vector.make``. ``vectorization_mode="sync"`` / ``"async"`` build
  Gymnasium's own vector envs over ``JointEnv`` copies instead.

``config`` holds the env's own arguments (``width``, ``seed``, ``num_threads``, ...).
"""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

__all__ = ["NAMESPACE", "gymnasium_id", "make_vector", "register_envs"]

NAMESPACE = "seer_env"


def gymnasium_id(name: str) -> str:
    """The Gymnasium id of env ``name``: ``"seer_env/<name>"``."""
    return f"{NAMESPACE}/{name}"


def make_vector(num_envs: int, name: str, **config: Any):
    """The specs' vector entry point: ``num_envs`` instances of ``name``, a ``SeerVectorEnv``."""
    from seer_env.vector import SeerVectorEnv

    return SeerVectorEnv(name, num_envs, **config)


def register_envs() -> list[str]:
    """Register every lockstep seer_env env with Gymnasium (idempotent); returns the ids.

    The joint-action and vector envs Gymnasium builds step every agent at every
    step: an env whose agents act when their events ask is not registered.
    """
    from seer_env.registry import env_names

    ids = []
    for name in env_names(decisions=False):
        env_id = gymnasium_id(name)
        if env_id not in registry:
            register(
                id=env_id,
                entry_point="seer_env.integrations.gymnasium:make_joint",
                vector_entry_point="seer_env.integrations.gymnasium_registration:make_vector",
                kwargs={"name": name},
                disable_env_checker=False,
            )
        ids.append(env_id)
    return ids
