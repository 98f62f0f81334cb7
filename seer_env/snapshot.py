"""Snapshots of a running env: exact, restorable, data (never code).

``env.snapshot()`` returns a :class:`Snapshot`; ``env.restore(snapshot)`` puts
an env of the same workload, version and configuration into exactly that state,
on any executor and thread count, and the env then continues with the same
bytes as the one that was snapshotted (``docs/branching.md``).

A snapshot is two parts:

- the runtime's state, ``Simulation.save()``: entity states, pending events,
  random streams, the last boundary's outputs, and the identity of the model
  and configuration, written by the C++ runtime with plain copies (about the
  size of the live state; its own checksum);
- the wrapper's episode bookkeeping (live agents in the user's order, cycle
  counter, episode seed, the contract checks still to run) and the env's
  identity, as a small JSON header.

``bytes(snapshot)`` / ``Snapshot.from_bytes`` store it: a magic, a format
version, the header's length and CRC-32, the header, the runtime's save.
Reading checks every length against the data and both checksums, parses the
header as JSON (no pickle, no code), and the runtime validates its part field
by field (docs/reliability.md, *Saved states*): a corrupt or crafted file is a
``ValueError``, never a crash, a hang or an unbounded allocation.
"""

from __future__ import annotations

import dataclasses
import json
import struct
import zlib
from typing import Any

import numpy as np

__all__ = ["Snapshot", "episode_fields", "require_same_env"]

MAGIC = b"SEERSNP1"  # the last byte is the format version
_LENGTHS = struct.Struct("<QIQ")  # header bytes, header CRC-32, runtime save bytes
MAX_HEADER_BYTES = 64 << 20  # agent names of the largest envs fit many times over


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """An env's complete state at a step boundary (``env.snapshot()``).

    Attributes:
        env: the env's identity: its class, workload version name, ``max_cycles``
            and agent count (the runtime's save carries the model configuration).
        episode: the wrapper's bookkeeping: ``agents`` (the live agents, in the
            caller's order), ``cycles``, ``episode_seed`` and ``checked_steps_left``.
        runtime: ``Simulation.save()`` of the env's runtime.
    """

    env: dict[str, Any]
    episode: dict[str, Any]
    runtime: bytes

    def __bytes__(self) -> bytes:
        """The snapshot as one buffer (``Snapshot.from_bytes`` reads it back)."""
        header = json.dumps({"env": self.env, "episode": self.episode}).encode()
        lengths = _LENGTHS.pack(len(header), zlib.crc32(header), len(self.runtime))
        return b"".join((MAGIC, lengths, header, self.runtime))

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Snapshot:
        """Read ``bytes(snapshot)`` back; ValueError naming what is wrong with anything else."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ValueError(f"data must be bytes-like, got {type(data).__name__}")
        data = memoryview(data).cast("B")
        fixed = len(MAGIC) + _LENGTHS.size
        if len(data) < fixed:
            raise ValueError(f"snapshot is truncated ({len(data)} bytes)")
        magic = bytes(data[: len(MAGIC)])
        if magic[:-1] != MAGIC[:-1]:
            raise ValueError("not a seer_env snapshot (bad magic)")
        if magic != MAGIC:
            raise ValueError(
                f"snapshot has format version {magic[-1:]!r}; this seer_env reads "
                f"{MAGIC[-1:]!r} only"
            )
        header_len, header_crc, runtime_len = _LENGTHS.unpack_from(data, len(MAGIC))
        if header_len > MAX_HEADER_BYTES or fixed + header_len + runtime_len != len(data):
            raise ValueError(
                f"snapshot lengths do not match its size: header {header_len} B, runtime "
                f"{runtime_len} B, {len(data)} B in all"
            )
        header = bytes(data[fixed : fixed + header_len])
        if zlib.crc32(header) != header_crc:
            raise ValueError("snapshot header checksum does not match (the bytes were changed)")
        try:
            parsed = json.loads(header)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"snapshot header is not valid JSON: {exc}") from None
        if (
            not isinstance(parsed, dict)
            or not isinstance(parsed.get("env"), dict)
            or not isinstance(parsed.get("episode"), dict)
        ):
            raise ValueError("snapshot header lacks its 'env' and 'episode' objects")
        return cls(parsed["env"], parsed["episode"], bytes(data[fixed + header_len :]))

    def __repr__(self) -> str:
        """One line: what it is a snapshot of, and its size."""
        name = self.env.get("model")
        return (
            f"Snapshot({name}, cycle {self.episode.get('cycles')}, "
            f"{len(self.episode.get('agents', []))} live agents, {len(self.runtime)} B of runtime "
            "state)"
        )


def require_same_env(snapshot: Any, identity: dict[str, Any]) -> Snapshot:
    """``snapshot`` as a Snapshot of an env with ``identity``; ValueError naming what differs."""
    if isinstance(snapshot, (bytes, bytearray, memoryview)):
        snapshot = Snapshot.from_bytes(snapshot)
    if not isinstance(snapshot, Snapshot):
        raise ValueError(
            f"snapshot must be a seer_env Snapshot or its bytes, got {type(snapshot).__name__}"
        )
    differs = [
        f"{key}={snapshot.env.get(key)!r} (this env: {identity[key]!r})"
        for key in identity
        if snapshot.env.get(key) != identity[key]
    ]
    if differs:
        raise ValueError("snapshot is of another env: " + ", ".join(differs))
    return snapshot


def episode_fields(
    episode: dict[str, Any], agent_index: dict[str, int], max_cycles: int
) -> tuple[list[str], np.ndarray, int, int, int]:
    """A snapshot's episode record, checked.

    Returns ``(agents, live, cycles, episode_seed, checked_steps_left)``, ``live`` a bool per
    row of ``agent_index`` (name -> row); ValueError naming the field that is not what the
    env could have written.
    """
    agents = episode.get("agents")
    live = np.zeros(len(agent_index), dtype=bool)
    try:
        rows = [agent_index[a] for a in agents] if isinstance(agents, list) else None
    except (KeyError, TypeError):  # no agent's name, or not a name at all
        rows = None
    if rows is not None:
        live[rows] = True
    if rows is None or int(live.sum()) != len(rows):  # unknown or repeated names
        shown = str(agents)[:200]
        raise ValueError(f"snapshot's agents must be distinct agent names of the env, got {shown}")
    fields = []
    for key, hi in (
        ("cycles", max_cycles),
        ("episode_seed", 2**64 - 1),
        ("checked_steps_left", 2**64 - 1),
    ):
        value = episode.get(key)
        if type(value) is not int or not 0 <= value <= hi:
            raise ValueError(f"snapshot's {key} must be an integer in [0, {hi}], got {value!r}")
        fields.append(value)
    return agents, live, fields[0], fields[1], fields[2]
