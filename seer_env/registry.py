"""``seer_env.make(name, **config)``: envs by name."""

from __future__ import annotations

from pettingzoo import ParallelEnv

from seer_env.envs import VERSIONS


def env_names() -> list[str]:
    """Names of the built-in envs (the rows of ``seer_env.envs.VERSIONS``)."""
    return sorted(VERSIONS)


def make(name: str, **config) -> ParallelEnv:
    """Build the ParallelEnv ``name`` (e.g. ``"pcs_v0"``) with ``config``."""
    if not isinstance(name, str) or name not in VERSIONS:
        raise ValueError(f"name must be one of {env_names()}, got {name!r}")
    return VERSIONS[name].parallel_env(**config)
