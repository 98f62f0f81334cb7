"""The NumbaModel traffic grid against its C++ twin, serial, stepped in turn.

    python tests/support/traffic_grid_speed.py [SIZE ...]

The third model of the NumbaModel speed figures in docs/custom-models.md
(PCS: examples/numba_pcs_speed.py; HeatRing: heat_ring_speed.py). SIZE x SIZE
intersections (default 32); each size runs with cars (``cars_per_approach``
4) and idle (0: every SERVE finds an empty queue), all signals at phase 0.
The C++ twin is the test model ``traffic_grid``
(cpp/tests/models/traffic), compiled into the editable build's module.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from traffic_grid_numba import TrafficGridNumba  # noqa: E402

from seer_env import _core  # noqa: E402
from seer_env.testing import serial_step_ratio  # noqa: E402


def measure(sizes, steps: int = 20, rounds: int = 5) -> dict:
    """``{(size, cars_per_approach): StepRatio}``, numba over C++."""
    _core._register_test_models()
    return {
        (size, cars): serial_step_ratio(
            TrafficGridNumba, "traffic_grid",
            {"width": size, "height": size, "cars_per_approach": cars},
            steps=steps, rounds=rounds,
        )
        for size in sizes
        for cars in (4, 0)
    }  # fmt: skip


if __name__ == "__main__":
    for (size, cars), ratio in measure([int(a) for a in sys.argv[1:]] or [32]).items():
        print(f"traffic grid {size}x{size}, {cars} cars per approach: numba / C++ {ratio}")
