"""The decision cache: one JSON file of STPA decisions per (env, config, machine).

The file lives at ``$SEER_STPA_CACHE`` if set (``off`` disables caching),
else ``$XDG_CACHE_HOME/seer_env/stpa.json`` (``~/.cache/seer_env/stpa.json``).
It is a cache, never a source of truth: an unreadable, corrupt or unwritable
file means a miss or a skipped store, reported but never raised. Writes go to
a temporary file that replaces the old one, so concurrent processes never
see half a file (the last writer wins).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

FORMAT = 1
MAX_ENTRIES = 256  # oldest dropped beyond this


def default_path() -> Path | None:
    """Where the cache lives, or None when ``SEER_STPA_CACHE=off``."""
    override = os.environ.get("SEER_STPA_CACHE")
    if override is not None:
        return None if override.strip().lower() in ("", "off", "0", "none") else Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "seer_env" / "stpa.json"


def make_key(identity: dict) -> str:
    """A short stable hash of a JSON-ready ``identity`` (env, config, machine, versions)."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class DecisionCache:
    """Get and put decisions in one cache file; every failure becomes a status string."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def _load_all(self) -> dict:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, UnicodeDecodeError):
            return {}  # corrupt or unreadable: start over on the next store
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return {}
        entries = data.get("entries")
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str) -> dict | None:
        """The entry stored under ``key``, or None."""
        entry = self._load_all().get(key)
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: dict) -> str:
        """Store ``entry`` under ``key``; returns ``"stored"`` or why not."""
        if self.path is None:
            return "disabled (SEER_STPA_CACHE=off)"
        entries = self._load_all()
        entries[key] = dict(entry, stored_at=time.time())
        if len(entries) > MAX_ENTRIES:
            by_age = sorted(entries, key=lambda k: entries[k].get("stored_at", 0.0))
            for old in by_age[: len(entries) - MAX_ENTRIES]:
                del entries[old]
        text = json.dumps({"format": FORMAT, "entries": entries}, indent=1, sort_keys=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".stpa-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            return f"not stored ({type(exc).__name__}: {exc})"
        return "stored"
