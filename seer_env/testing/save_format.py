"""The save format's checksum in Python, to craft blobs that pass it.

``Simulation.save()`` writes an 8-byte magic, the ``seer::Digest``
(cpp/src/digest.hpp) of everything after the 16-byte header, then
the body. Tests and the fuzzer change the body on purpose and re-sign it with
``rechecksum`` so that the runtime's own validation, not the checksum, is what
refuses the blob.
"""

from __future__ import annotations

import struct

__all__ = ["HEADER", "digest", "rechecksum"]

HEADER = 16  # magic + checksum
_MASK = (1 << 64) - 1


def _finalize(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def digest(data: bytes) -> int:
    """``seer::Digest`` of ``data``: its little-endian 8-byte words, then the tail."""
    state, count = 0x243F6A8885A308D3, 0
    full = len(data) - len(data) % 8
    words = list(struct.unpack_from(f"<{full // 8}Q", data)) if full else []
    tail = data[full:]
    words.append(int.from_bytes(tail, "little") ^ (len(tail) << 56))
    for word in words:
        count += 1
        state = _finalize(state ^ ((word + 0x9E3779B97F4A7C15 * count) & _MASK))
    return _finalize(state ^ count)


def rechecksum(blob: bytes | bytearray) -> bytes:
    """``blob`` with the header's checksum recomputed over its body."""
    blob = bytes(blob)
    return blob[:8] + struct.pack("<Q", digest(blob[HEADER:])) + blob[HEADER:]
