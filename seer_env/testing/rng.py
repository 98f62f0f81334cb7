"""The per-entity random streams, in Python: the same numbers as the C++ runtime.

Entity ``e`` under seed ``s`` draws from ``numpy.random.Philox(key=s | e << 64)``
(Philox4x64-10; counter starting at 0, incremented before each block of four
64-bit words). Derived values use the same recipe as ``cpp/include/seer/rng.hpp``:

* ``uniform()``       = ``(raw >> 11) * 2**-53``, in [0, 1)
* ``exponential(m)``  = ``-m * log1p(-uniform())``  (libm ``log1p``, as in C++)
* ``below(n)``        = ``(raw * n) >> 64``, in [0, n)

Reference models use this class so that C++ and Python runs can be compared
bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

_TWO_POW_M53 = 2.0**-53
_CHUNK = 256


class EntityRng:
    """The random stream of one entity (see the module docstring)."""

    __slots__ = ("_bitgen", "_buf", "_pos")

    def __init__(self, seed: int, entity: int) -> None:
        if not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {seed}")
        if not 0 <= entity < 2**64:
            raise ValueError(f"entity must be an integer in [0, 2**64), got {entity}")
        self._bitgen = np.random.Philox(key=int(seed) | (int(entity) << 64))
        self._buf: list[int] = []
        self._pos = 0

    def next_u64(self) -> int:
        """The next raw 64-bit word, as a Python int."""
        if self._pos == len(self._buf):
            # Draw ahead in chunks: numpy's stream is the same however it is read.
            self._buf = self._bitgen.random_raw(_CHUNK).tolist()
            self._pos = 0
        word = self._buf[self._pos]
        self._pos += 1
        return word

    def uniform(self) -> float:
        """A float in [0, 1) with 53 random bits."""
        return (self.next_u64() >> 11) * _TWO_POW_M53

    def exponential(self, mean: float) -> float:
        """An exponential variate with the given mean."""
        return -mean * math.log1p(-self.uniform())

    def below(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        return (self.next_u64() * n) >> 64
