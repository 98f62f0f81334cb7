"""One ActionChecker: env dict step, env step_arrays and the vector env agree on every value."""

import numpy as np
import pytest

from seer_env import vector
from seer_env.envs import aircraft_v0, pcs_v0

PCS = dict(width=2, height=2, phones_per_cell=2, executor="serial", seed=0)
AIRCRAFT = dict(num_uavs=3, substeps=2, executor="serial", seed=0)

DISCRETE_VALUES = [0, 10, 2.0, -1, 11, 0.5, np.nan, np.inf, True, np.uint64(3), 2**40]
BOX_VALUES = [0.0, 1.0, -1.0, 1.5, np.nan, -np.inf, 1 + 1e-9, 1e300]


def outcomes(module, cfg, rows_value):
    """Accepted (True) or rejected (False) by each of the three paths, for agent 0's action."""
    results = []
    env = module.parallel_env(**cfg)
    discrete = env._discrete
    zero = 0 if discrete else np.zeros(env.action_space(env.possible_agents[0]).shape, np.float32)
    n = len(env.possible_agents)
    for path in ("dict", "arrays"):
        env = module.parallel_env(**cfg)
        env.reset(seed=1)
        actions = [zero] * n
        actions[0] = rows_value
        try:
            if path == "dict":
                env.step(dict(zip(env.possible_agents, actions)))
            else:
                env.step_arrays(actions)  # as given: np.array() would turn True into 1
            results.append(True)
        except ValueError:
            results.append(False)
    venv = vector.make(module.__name__.rsplit(".", 1)[1], num_envs=2, **cfg)
    venv.reset(seed=1)
    try:
        venv.step([rows_value] + [zero] * (2 * n - 1))
        results.append(True)
    except ValueError:
        results.append(False)
    return results


@pytest.mark.parametrize("value", DISCRETE_VALUES, ids=repr)
def test_discrete_paths_agree(value):
    got = outcomes(pcs_v0, PCS, value)
    assert got in ([True] * 3, [False] * 3), got
    integral = bool(np.isfinite(value)) and float(value) == int(value)
    is_bool = isinstance(value, (bool, np.bool_))  # a bool is not an action
    assert got[0] == (integral and 0 <= value < 11 and not is_bool)


@pytest.mark.parametrize("value", BOX_VALUES, ids=repr)
def test_box_paths_agree(value):
    row = np.full(4, value)
    got = outcomes(aircraft_v0, AIRCRAFT, row)
    assert got in ([True] * 3, [False] * 3), got
    # Out of range (inf, and 1e300, which overflows float32 to inf without a
    # cast warning) is clipped like ClipAction; only NaN is rejected.
    assert got[0] == (not np.isnan(row).any())
