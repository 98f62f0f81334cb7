"""The save format's checksum in Python, to craft blobs that pass it.

``Simulation.save()`` writes an 8-byte magic, the checksum
(cpp/src/save_checksum.hpp) of everything after the 16-byte header, then
the body. Tests and the fuzzer change the body on purpose and re-sign it with
``rechecksum`` so that the runtime's own validation, not the checksum, is what
refuses the blob.
"""

from __future__ import annotations

import struct

__all__ = ["HEADER", "checksum", "rechecksum"]

HEADER = 16  # magic + checksum
_MASK = (1 << 64) - 1
_LANES = (0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89)


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def checksum(data: bytes) -> int:
    """``seer::save_checksum``: word i (little-endian) into lane i % 4, then the tail and size."""
    lanes = list(_LANES)
    full = len(data) - len(data) % 8
    words = struct.unpack_from(f"<{full // 8}Q", data) if full else ()
    for i, word in enumerate(words):
        k = i % 4
        lanes[k] = _mix(lanes[k] ^ ((word + 0x9E3779B97F4A7C15 * (i + 1)) & _MASK))
    tail = int.from_bytes(data[full:], "little")
    h = _mix(tail ^ ((len(data) << 8) & _MASK))
    for lane in lanes:
        h = _mix(h ^ lane)
    return h


def rechecksum(blob: bytes | bytearray) -> bytes:
    """``blob`` with the header's checksum recomputed over its body."""
    blob = bytes(blob)
    return blob[:8] + struct.pack("<Q", checksum(blob[HEADER:])) + blob[HEADER:]
