"""`make bench` with only the bench extra: the optional groups are skipped with a note.

The integrations (torch, TorchRL, SuperSuit, Ray) are hidden from a bench
subprocess by an import hook, as if `pip install -e ".[bench]"` were all there is.
"""

import json
import os
import subprocess
import sys
import textwrap

from bench import report
from bench.timing import run_interleaved

HIDDEN = ("torch", "torchrl", "tensordict", "supersuit", "ray")

BLOCKER = textwrap.dedent(
    f"""
    import sys

    class _Missing:
        # The integrations extra is not installed: its packages cannot be imported.
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {HIDDEN!r}:
                raise ImportError(f"No module named {{name!r}} (hidden by the test)")
            return None

    sys.meta_path.insert(0, _Missing())
    """
)


def test_run_interleaved_with_no_cases_times_nothing():
    assert run_interleaved([], warmup_steps=1, rounds=3, steps_per_turn=2) == 2


def test_bench_without_the_integrations_skips_the_torchrl_group_with_a_note(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(hook), os.getcwd(), env.get("PYTHONPATH", "")])
    out = tmp_path / "out"
    args = ["--profile", "default", "--only", "TorchRL", "--no-contention", "--out", str(out)]
    proc = subprocess.run(
        [sys.executable, "-m", "bench", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((out / "results.json").read_text())
    (group,) = data["groups"]
    assert group["rows"] == []
    assert any("TorchRL cases left out" in n for n in group["notes"])
    md = (out / "results.md").read_text()
    assert md == report.markdown(data)
    assert "Skipped: TorchRL cases left out" in md
