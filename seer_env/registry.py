"""``seer_env.make(name, **config)``: envs by name."""

from __future__ import annotations

from pettingzoo import ParallelEnv

from seer_env.envs import VERSIONS


def env_names(*, decisions: bool | None = None) -> list[str]:
    """Names of the built-in envs (the rows of ``seer_env.envs.VERSIONS``).

    ``decisions``: only the envs whose agents act when their events ask
    (``True``: ``SeerDecisionEnv``s, docs/decisions.md) or those where every live
    agent acts at every step (``False``); ``None``: all.
    """
    names = sorted(VERSIONS)
    if decisions is None:
        return names
    return [n for n in names if VERSIONS.env_class(n)._event_driven == decisions]


def make(name: str, **config) -> ParallelEnv:
    """Build the ParallelEnv ``name`` (e.g. ``"pcs_v0"``) with ``config``."""
    if not isinstance(name, str) or name not in VERSIONS:
        raise ValueError(f"name must be one of {env_names()}, got {name!r}")
    return VERSIONS[name].parallel_env(**config)
