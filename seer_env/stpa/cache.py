"""The decision cache: one JSON file of STPA decisions per (env, config, machine).

The file lives at ``$SEER_STPA_CACHE`` if set (``off``, ``0``, ``none``,
empty or the null device ``/dev/null`` disable caching), else
``$XDG_CACHE_HOME/seer_env/stpa.json``
(``~/.cache/seer_env/stpa.json``); a relative ``XDG_CACHE_HOME`` is ignored (as
the XDG spec says) and an empty or relative ``HOME`` means no cache (never
``/.cache`` or a directory relative to wherever the process runs). It is a
cache, never a source of truth: an unreadable, corrupt or unwritable file means
a miss or a skipped store, reported but never raised. A path that exists and
is not a regular file (a FIFO, a device, a directory, a symlink to one of
these; a symlink to a regular file is followed) is a miss and left alone: it
is never opened for a blocking read and never replaced. Every entry is checked
for its shape when the file is read (anything else is dropped, so no malformed
entry reaches the caller or the eviction). Writes go to a temporary file that
replaces the old one, so concurrent processes never see half a file (the last
writer wins).

An entry is ``{"identity", "report", "stored_at", "provisional"}``:
``provisional`` marks a decision measured while the CPUs were contended
(see ``load.py``); it never replaces an entry measured on a quiet machine.
An entry older than ``MAX_AGE_S`` (or stored in the future: a clock set
back) is not reused (``expired``): a decision measured under a load the
signals missed must not stay forever, whatever its duels said.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import stat
import tempfile
import time
from pathlib import Path

FORMAT = 1
MAX_ENTRIES = 256  # oldest dropped beyond this
MAX_FILE_BYTES = 8 << 20  # 256 entries take ~1 MB; a larger file is not ours
MAX_DEPTH = 12  # nesting of a well-formed entry is ~5; deeper is not ours
DISABLED = ("", "off", "0", "none", "false", "no")
ENV_VAR = "SEER_STPA_CACHE"  # a path, or off
MAX_AGE_S = 7 * 86400.0  # an entry is measured again after a week
FUTURE_SLACK_S = 86400.0  # stored_at this far ahead of the clock: the clock was set back


def expired(entry: dict, now: float | None = None) -> bool:
    """Whether ``entry`` (``valid_entry``'s shape) is too old, or dated in the future, to reuse."""
    now = time.time() if now is None else now
    age = now - entry["stored_at"]
    return age > MAX_AGE_S or age < -FUTURE_SLACK_S


def is_null_device(path: str | os.PathLike) -> bool:
    """Whether ``path`` names the null device (``/dev/null``, or a link to it): cache off.

    Only ``stat`` is called: the device is never opened.
    """
    if os.path.normpath(os.path.abspath(path)) == os.devnull:
        return True
    try:
        return os.path.samefile(path, os.devnull)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return False


def not_a_regular_file(path: Path) -> str | None:
    """What ``path`` is when it exists and is not a regular file, else None.

    A symlink is followed (to a regular file it is fine, to anything else it
    is not; a dangling one is a file yet to be written). ``stat`` opens
    nothing, so a FIFO or a device is never read from here.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        return f"cannot be examined ({type(exc).__name__}: {exc})"
    if stat.S_ISREG(mode):
        return None
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((name for test, name in kinds if test(mode)), "not a regular file")
    return f"is {kind}, not a regular file"


def _read_regular(path: Path) -> str | None:
    """The text of ``path`` if it is a regular file of at most MAX_FILE_BYTES, else None.

    Opened without blocking (a FIFO swapped in after a ``stat`` cannot hang
    the read) and checked again on the open descriptor, which no rename can
    change.
    """
    if not_a_regular_file(path) is not None:
        return None  # never opened: opening some devices has effects
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        data = f.read(MAX_FILE_BYTES + 1)
    return None if len(data) > MAX_FILE_BYTES else data.decode()


def default_path() -> Path | None:
    """Where the cache lives, or None when ``SEER_STPA_CACHE`` disables it.

    None too when there is no home directory to put it in (then nothing is
    cached), and for ``SEER_STPA_CACHE=/dev/null``: the usual way to say
    "off", never a file to replace.
    """
    override = os.environ.get(ENV_VAR)
    if override is not None:
        if override.strip().lower() in DISABLED or is_null_device(override):
            return None
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):  # XDG: a relative path is invalid, ignored
        home = os.environ.get("HOME")
        if home is not None and not os.path.isabs(home):
            return None  # HOME="" would make "~" the root directory: cache nothing
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no $HOME and no passwd entry
            return None
    return Path(base) / "seer_env" / "stpa.json"


def make_key(identity: dict) -> str:
    """A short stable hash of a JSON-ready ``identity`` (env, config, machine, versions)."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _shallow(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests at most ``limit`` containers deep (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in children)
    return True


def valid_entry(entry: object) -> bool:
    """Whether ``entry`` has the shape ``put`` writes (and nothing deeper than MAX_DEPTH)."""
    if not isinstance(entry, dict):
        return False
    report, stored_at = entry.get("report"), entry.get("stored_at")
    if not isinstance(entry.get("identity"), dict) or not isinstance(report, dict):
        return False
    if isinstance(stored_at, bool) or not isinstance(stored_at, (int, float)):
        return False
    if not math.isfinite(stored_at) or not isinstance(entry.get("provisional", False), bool):
        return False
    choice = report.get("choice")
    if not isinstance(choice, dict) or not isinstance(choice.get("executor"), str):
        return False
    n = choice.get("num_threads")
    if isinstance(n, bool) or not isinstance(n, int):
        return False
    return _shallow(entry)


class _LeftAlone(Exception):
    """The cache path turned out not to be a regular file: nothing is written."""


class DecisionCache:
    """Get and put decisions in one cache file; every failure becomes a status string."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def _load_all(self) -> dict[str, dict]:
        """Every well-formed entry of the file (an empty dict for anything else)."""
        if self.path is None:
            return {}
        try:
            text = _read_regular(self.path)
            if text is None:  # not a regular file, or too large to be ours
                return {}
            data = json.loads(text)
        except FileNotFoundError:
            return {}
        # ValueError covers bad JSON, UnicodeDecodeError and a NUL in the path;
        # RecursionError: nesting deeper than the parser's stack.
        except (OSError, ValueError, RecursionError):
            return {}  # corrupt or unreadable: start over on the next store
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return {}
        entries = data.get("entries")
        if not isinstance(entries, dict):
            return {}
        return {k: e for k, e in entries.items() if valid_entry(e)}

    def get(self, key: str) -> dict | None:
        """The well-formed entry stored under ``key``, or None."""
        return self._load_all().get(key)

    def put(self, key: str, entry: dict, *, provisional: bool = False) -> str:
        """Store ``entry`` under ``key``; returns ``"stored"`` or why not.

        A ``provisional`` entry (measured under contention) does not replace
        an entry that was measured on a quiet machine.
        """
        if self.path is None:
            return f"disabled ({ENV_VAR}=off)"
        # Write where a symlink points (replacing the link would break it),
        # and never over something that is not a regular file: /dev/null run
        # as root would become a JSON file.
        try:
            target = Path(os.path.realpath(self.path))
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            return f"not stored ({type(exc).__name__}: {exc})"
        other = not_a_regular_file(target)
        if other is not None:
            return f"not stored ({target} {other}: left alone)"
        entries = self._load_all()
        old = entries.get(key)
        if provisional and old is not None and not old.get("provisional", False):
            return "not stored (the entry measured on a quiet machine is kept)"
        entries[key] = dict(entry, stored_at=time.time(), provisional=provisional)
        if len(entries) > MAX_ENTRIES:
            by_age = sorted(entries, key=lambda k: entries[k]["stored_at"])
            for stale in by_age[: len(entries) - MAX_ENTRIES]:
                del entries[stale]
        try:
            text = json.dumps({"format": FORMAT, "entries": entries}, indent=1, sort_keys=True)
        except (TypeError, ValueError, RecursionError) as exc:  # not JSON-ready: a bug, not fatal
            return f"not stored ({type(exc).__name__}: {exc})"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".stpa-", dir=target.parent)
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                # Checked again just before the replace (a FIFO may have
                # appeared while the file was written).
                other = not_a_regular_file(target)
                if other is not None:
                    raise _LeftAlone(f"{target} {other}: left alone")
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except _LeftAlone as exc:
            return f"not stored ({exc})"
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            return f"not stored ({type(exc).__name__}: {exc})"
        return "stored"
