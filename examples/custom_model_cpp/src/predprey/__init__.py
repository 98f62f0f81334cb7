"""predprey_v0: predator-prey on a torus, a custom seer_env model.

Predators (the agents, ``predator_0 ..``) move one cell per step
(``Discrete(5)``: stay, up, down, left, right) and catch the random-walking
prey they pounce on; reward = prey caught this step - ``step_cost``.
Observation: own position / grid size, then live-prey counts in the
``(2 * view_radius + 1)**2`` window around the predator.

``parallel_env(implementation="cpp")`` runs the compiled C++ model (any
executor, any thread count, the same bytes); ``implementation="python"`` runs
the Python prototype it was ported from (serial executor only).
"""

from __future__ import annotations

import seer_env
from predprey import _predprey
from predprey.prototype import PredPreyPrototype
from seer_env.workloads import workload_spec

__all__ = ["PredPreyEnv", "PredPreyPrototype", "parallel_env"]

# The compiled model joins seer_env's registry under this name.
seer_env.register_cpp_model("predprey", _predprey)

# The model's parameters, from its declaration (src/cpp/workload.cpp).
_MODEL_KEYS = tuple(p["name"] for p in workload_spec("predprey")["params"])


class PredPreyEnv(seer_env.SeerParallelEnv):
    """The predprey_v0 ParallelEnv; model keywords as in ``PredPreyPrototype``."""

    metadata = {"name": "predprey_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, implementation: str = "cpp", **kwargs):
        if implementation not in ("cpp", "python"):
            raise ValueError(f"implementation must be 'cpp' or 'python', got {implementation!r}")
        config = {k: kwargs.pop(k) for k in _MODEL_KEYS if k in kwargs}
        model = "predprey" if implementation == "cpp" else PredPreyPrototype
        super().__init__(model, config, **kwargs)


def parallel_env(**kwargs) -> PredPreyEnv:
    """Build the env (see the module docstring)."""
    return PredPreyEnv(**kwargs)
