"""The PEER line: the one line every runner (ours on each engine, and seer's) prints.

``PEER engine=ross mode=sequential threads=1 model=pcs size=64x64 end_time=3000
seed=0 committed_events=750123 wall_s=1.234 ...``: ``key=value`` pairs
separated by spaces, the same keys for every engine (PCS adds its counters and
``blocking_probability``). Engines print plenty of their own output around it;
the harness takes the last PEER line of a run.
"""

from __future__ import annotations

PREFIX = "PEER "
# Keys every PEER line carries.
REQUIRED = (
    "engine",
    "mode",
    "threads",
    "model",
    "size",
    "end_time",
    "seed",
    "committed_events",
    "wall_s",
)
INT_KEYS = {
    "threads",
    "seed",
    "committed_events",
    "call_attempts",
    "blocks",
    "busy_lines",
    "handoffs",
    "dropped_handoffs",
    "calls",
}
FLOAT_KEYS = {"end_time", "wall_s", "blocking_probability"}


class PeerLineError(ValueError):
    """A run printed no PEER line, or a malformed one."""


def parse(line: str) -> dict:
    """One PEER line as a dict: integers and floats converted, the rest strings."""
    if not line.startswith(PREFIX):
        raise PeerLineError(f"not a PEER line: {line!r}")
    out: dict = {}
    for field in line[len(PREFIX) :].split():
        key, sep, value = field.partition("=")
        if not sep or not key:
            raise PeerLineError(f"malformed field {field!r} in {line!r}")
        try:
            convert = int if key in INT_KEYS else float if key in FLOAT_KEYS else str
            out[key] = convert(value)
        except ValueError as exc:
            raise PeerLineError(f"bad number in {field!r} of {line!r}") from exc
    missing = [k for k in REQUIRED if k not in out]
    if missing:
        raise PeerLineError(f"PEER line without {', '.join(missing)}: {line!r}")
    return out


def find(output: str) -> dict:
    """The last PEER line of a run's output, parsed."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip().startswith(PREFIX)]
    if not lines:
        raise PeerLineError("the run printed no PEER line")
    return parse(lines[-1])


def format_line(fields: dict) -> str:
    """A PEER line from a dict (the seer runner's; keys in the dict's order)."""
    parts = []
    for key, value in fields.items():
        text = repr(value) if isinstance(value, float) else str(value)
        if not text or any(c.isspace() for c in text) or "=" in text:
            raise PeerLineError(f"value of {key} cannot go in a PEER line: {text!r}")
        parts.append(f"{key}={text}")
    return PREFIX + " ".join(parts)
