"""numba is an extra: `import seer_env` neither needs it nor loads it.

Each case runs in a fresh interpreter, since this one has numba loaded already.
``sys.modules["numba"] = None`` makes ``import numba`` fail there as on a machine
without it.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

SUPPORT = Path(__file__).resolve().parents[1] / "support"


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=SUPPORT,
    )


def test_import_seer_env_loads_no_numba():
    done = _run(
        """
        import sys
        import seer_env
        seer_env.SeerParallelEnv("pcs", {"width": 4, "height": 4}).reset(seed=0)
        loaded = sorted(m for m in ("numba", "llvmlite") if m in sys.modules)
        print("loaded:", loaded)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stdout


def test_without_numba_models_run_interpreted_and_compiled_mode_says_what_to_install():
    done = _run(
        """
        import sys
        sys.modules["numba"] = None
        import seer_env
        from numba_faulty import Faulty

        env = seer_env.SeerParallelEnv(Faulty, {"compiled": False})
        env.reset(seed=0)
        env.step({a: env.action_space(a).sample() for a in env.agents})
        print("interpreted ok")
        try:
            seer_env.SeerParallelEnv(Faulty, {})
        except ModuleNotFoundError as error:
            print("compiled:", error)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "interpreted ok" in done.stdout
    assert "compiled: Faulty runs compiled with numba: pip install 'seer_env[numba]'" in done.stdout
