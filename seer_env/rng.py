"""Deprecated: the per-entity random streams in Python are ``seer_env.testing.rng``.

They serve the Python oracles of the built-in models (``seer_env.testing.reference``);
this name stays for one release.
"""

import warnings

from seer_env.testing.rng import EntityRng

__all__ = ["EntityRng"]

warnings.warn(
    "seer_env.rng is deprecated: import EntityRng from seer_env.testing.rng",
    DeprecationWarning,
    stacklevel=2,
)
