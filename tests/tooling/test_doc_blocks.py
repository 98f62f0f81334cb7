"""Every Python code block of README.md and docs/ runs, as a reader would run it (sybil).

Each Markdown file runs in a subprocess of its own (a hang or a crash stays
there; the blocks' warnings are the user's, not errors), its blocks in order
in one namespace. Blocks that need an optional extra, or that are not meant to
run here, carry a skip comment (``tests/support/doc_blocks.py`` lists the forms).
Shell and text blocks are not run.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sybil")

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tests" / "support" / "doc_blocks.py"
DOCUMENTS = sorted(
    p.relative_to(ROOT).as_posix()
    for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    if "```python" in p.read_text()
)
# Seconds per document: the RLlib blocks start Ray and train one iteration (~80 s on 2 CPUs).
TIMEOUT_S = {"docs/integrations.md": 420, "docs/scaling.md": 420}


@pytest.mark.slow
@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_python_block_runs(document):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join([str(ROOT)]))
    proc = subprocess.Popen(
        [sys.executable, str(RUNNER), str(ROOT / document)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: workers the blocks left are ended
    )
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT_S.get(document, 240))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == 0, stderr[-4000:]
    result = json.loads(stdout.strip().splitlines()[-1])
    failed = "\n".join(f"{document}:{line}:\n{tb}" for line, tb in result["failed"].items())
    assert not result["failed"], failed
    assert result["ran"] or result["skipped"]
