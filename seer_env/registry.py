"""``seer_env.make(name, **config)``: envs by name."""

from __future__ import annotations

import importlib
import pkgutil
import re

from pettingzoo import ParallelEnv

from seer_env import envs as _envs

_VERSION_MODULE = re.compile(r"[a-z][a-z0-9_]*_v[0-9]+")  # pcs_v1: a version's module


def env_names() -> list[str]:
    """Names of the built-in envs (the version modules of ``seer_env.envs``)."""
    return sorted(
        m.name for m in pkgutil.iter_modules(_envs.__path__) if _VERSION_MODULE.fullmatch(m.name)
    )


def make(name: str, **config) -> ParallelEnv:
    """Build the ParallelEnv ``name`` (e.g. ``"pcs_v0"``) with ``config``."""
    if not isinstance(name, str) or name not in env_names():
        raise ValueError(f"name must be one of {env_names()}, got {name!r}")
    module = importlib.import_module(f"seer_env.envs.{name}")
    return module.parallel_env(**config)
