"""Run the Python code blocks of one Markdown file, in order, in one namespace (sybil).

``python tests/support/doc_blocks.py FILE`` evaluates every ```` ```python ````
block of FILE as a reader would run them, top to bottom, and prints one JSON
line: ``{"ran": [lines], "skipped": {line: reason}, "failed": {line: traceback}}``.
Blocks that are not Python (``bash``, ``text``) are not run. A block is skipped
by a comment before it:

- ``<!-- skip: next "why" -->``: not meant to run here (a cluster, a fragment);
- ``<!-- skip: next if(missing("ray.rllib"), reason="the rllib extra") -->``:
  needs an optional package (``missing(module)`` is True when it cannot be imported).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback
import unittest
from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser


def missing(module: str) -> bool:
    """True when ``module`` cannot be imported (its extra is not installed)."""
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:  # a parent package is missing (or fails to import)
        return True


def run(path: Path) -> dict:
    """Evaluate ``path``'s blocks; what ran, what was skipped (and why), what failed."""
    sybil = Sybil([PythonCodeBlockParser(), SkipParser()], path=str(path.parent))
    document = sybil.parse(path)
    document.namespace["missing"] = missing
    result: dict = {"ran": [], "skipped": {}, "failed": {}}
    for example in document:
        try:
            example.evaluate()
        except unittest.SkipTest as skip:
            result["skipped"][example.line] = str(skip)
        except BaseException:  # noqa: BLE001 - report every failure with its block's line
            result["failed"][example.line] = traceback.format_exc(limit=-8)
        else:
            result["ran"].append(example.line)
    return result


if __name__ == "__main__":
    print(json.dumps(run(Path(sys.argv[1]).resolve())), flush=True)
    # A block that leaves a worker pool open must not keep the run alive: exit now
    # (the test then ends what is left of this process group).
    os._exit(0)
