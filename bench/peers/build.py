"""Finding each peer engine's checkout and building our runners against it.

A peer is used when its environment variable names a checkout (or
``--<engine> PATH`` does); its ``build.sh`` builds into
``<build dir>/<engine>`` and skips the work when nothing changed. Whatever
stops an engine (variable unset, path missing, a tool missing, a failed
build) becomes one line saying why, and the comparison goes on without it.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

from bench.peers.engines import Engine


@dataclasses.dataclass
class Built:
    """An engine ready to run: its runners' folder and what engine.txt says of the build."""

    engine: Engine
    checkout: Path
    bin_dir: Path
    info: dict[str, str]


def checkout_of(engine: Engine, overrides: dict[str, str], environ: dict[str, str]) -> str | None:
    """The checkout named for ``engine`` (command line first, then its variable), or None."""
    path = overrides.get(engine.name) or environ.get(engine.env_var or "", "")
    return path or None


def read_info(path: Path) -> dict[str, str]:
    """``key=value`` lines of a build's engine.txt."""
    if not path.is_file():
        return {}
    pairs = (line.partition("=") for line in path.read_text().splitlines())
    return {k: v for k, sep, v in pairs if sep}


def build(engine: Engine, checkout: str, out_dir: Path) -> tuple[Built | None, str]:
    """Run the engine's build.sh; (the build, its last line) or (None, why not)."""
    script = engine.build_script
    assert script is not None, "seer is not built by a script"
    proc = subprocess.run(
        ["bash", str(script), checkout, str(out_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    if proc.returncode == 2:  # missing checkout or tool: its one line says what to do
        message = (proc.stderr.strip().splitlines() or ["exit 2"])[-1]
        return None, f"{engine.label} skipped: {message}"
    if proc.returncode != 0:
        tail = "\n    ".join(lines[-12:])
        return None, f"{engine.label} skipped: build failed (exit {proc.returncode}):\n    {tail}"
    built = Built(engine, Path(checkout), out_dir / "bin", read_info(out_dir / "engine.txt"))
    return built, lines[-1] if lines else f"{engine.label}: built"


def prepare(
    engines: tuple[Engine, ...],
    overrides: dict[str, str],
    build_dir: Path,
    environ: dict[str, str] | None = None,
) -> tuple[list[Built], list[str]]:
    """Every engine with a checkout, built; and a line for each engine left out."""
    environ = dict(os.environ) if environ is None else environ
    ready: list[Built] = []
    lines: list[str] = []
    for engine in engines:
        checkout = checkout_of(engine, overrides, environ)
        if checkout is None:
            lines.append(
                f"{engine.label} skipped: {engine.env_var} is not set "
                f"(a checkout of it; see bench/peers/README.md)"
            )
            continue
        built, line = build(engine, checkout, build_dir / engine.name)
        lines.append(line)
        if built is not None:
            ready.append(built)
    return ready, lines
