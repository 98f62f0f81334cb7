"""``SharedSpaces``: PettingZoo's per-agent space tables without an entry per agent.

Every agent of a seer env has the same space (one object, as SuperSuit
requires). A dict with an entry per agent costs ~30 bytes an agent per
table, ~2 MB each at PCS 256x256 (65,536 agents); this read-only mapping
answers every agent of the env's name -> row table with the one space.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["SharedSpaces"]


class SharedSpaces(Mapping):
    """A read-only ``{agent: space}`` over ``agents`` (name -> row), one ``space`` for all."""

    __slots__ = ("_agents", "_space")

    def __init__(self, agents: Mapping[str, int], space: Any) -> None:
        self._agents = agents
        self._space = space

    def __getitem__(self, agent: str) -> Any:
        if agent not in self._agents:
            raise KeyError(agent)
        return self._space

    def __iter__(self) -> Iterator[str]:
        return iter(self._agents)

    def __len__(self) -> int:
        return len(self._agents)

    def __repr__(self) -> str:
        return f"SharedSpaces({len(self)} agents: {self._space!r})"
