"""``seer_env.make(name, **config)``: envs by name."""

from __future__ import annotations

import importlib
import pkgutil

from pettingzoo import ParallelEnv

from seer_env import envs as _envs


def env_names() -> list[str]:
    """Names of the built-in envs (modules of ``seer_env.envs``)."""
    return sorted(
        m.name for m in pkgutil.iter_modules(_envs.__path__) if not m.name.startswith("_")
    )


def make(name: str, **config) -> ParallelEnv:
    """Build the ParallelEnv ``name`` (e.g. ``"pcs_v0"``) with ``config``."""
    if not isinstance(name, str) or name not in env_names():
        raise ValueError(f"name must be one of {env_names()}, got {name!r}")
    module = importlib.import_module(f"seer_env.envs.{name}")
    return module.parallel_env(**config)
