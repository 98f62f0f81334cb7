"""The NumbaModel port of HeatRing against its C++ port, serial, stepped in turn.

    python tests/support/heat_ring_speed.py [NUM_ENTITIES ...]

HeatRing is the second model of the NumbaModel speed figures in
docs/custom-models.md (PCS is the first: examples/numba_pcs_speed.py). Its
handlers are a few operations each, so the ratio shows what each event's
trip through the C ABI costs. Builds the C++ port (tests/support/plugins/planted,
mode 0: no bug) with CMake in a temporary folder first.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heat_ring_numba import HeatRingNumba  # noqa: E402
from plugin_build import PLANTED, cmake_build  # noqa: E402

import seer_env  # noqa: E402
from seer_env.testing import serial_step_ratio  # noqa: E402


def register_planted(folder: Path) -> None:
    """Build the C++ port into ``folder`` and register it as "planted_heat"."""
    build = cmake_build(PLANTED, folder)
    sys.path.insert(0, str(build))
    import _planted_heat

    seer_env.register_cpp_model("planted_heat", _planted_heat)


def measure(sizes, steps: int = 20, rounds: int = 5) -> dict:
    """``{(num_entities, action): StepRatio}``, numba over C++ (action 1 passes tokens too)."""
    return {
        (n, action): serial_step_ratio(
            HeatRingNumba, "planted_heat", {"num_entities": n}, steps=steps, rounds=rounds,
            action=action,
        )
        for n in sizes
        for action in (0, 1)
    }  # fmt: skip


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        register_planted(Path(folder))
        for (n, action), ratio in measure([int(a) for a in sys.argv[1:]] or [16384]).items():
            print(f"heat ring {n} entities, action {action}: numba / C++ {ratio}")
