"""The on-disk cache of compiled models: where it is, what its files are keyed on.

The generated entry points are written under ``~/.cache/seer_env/numba`` (or
``$SEER_ENV_NUMBA_CACHE``), one file per model class and digest of every input
of the compiled code; numba caches the compiled functions beside them.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from pathlib import Path


def cache_dir() -> Path:
    """Where the generated entry points (and their numba cache) live."""
    configured = os.environ.get("SEER_ENV_NUMBA_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "seer_env" / "numba"


def source_bytes(obj) -> bytes:
    """The bytes of the file that defines ``obj`` (a class, function or module); b"" if none."""
    try:
        return Path(inspect.getsourcefile(obj) or "").read_bytes()
    except (OSError, TypeError):
        return b""


def inputs_digest(parts: list[bytes]) -> str:
    """The hex digest of ``parts`` (each hashed on its own, so no two lists collide)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def entry_file(qualname: str, digest: str) -> Path:
    """The file of the entry points of the class ``qualname`` with this inputs ``digest``."""
    safe = "".join(c if c.isalnum() else "_" for c in qualname)
    return cache_dir() / f"{safe}_{digest[:16]}.py"


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path``: concurrent processes write the same text, none sees half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
