"""``env.neighbours()``: the pcs torus and the UAVs an aircraft UAV has heard, as index tables."""

import numpy as np
import pytest

import seer_env
from seer_env.neighbours import torus_neighbours


def test_pcs_neighbours_are_the_torus_in_observation_order():
    env = seer_env.make("pcs_v0", width=4, height=3)
    table = env.neighbours()
    assert table.shape == (12, 4) and table.dtype == np.int64
    # cell (x=0, y=1) = 4: x-1 wraps to x=3, y-1 = row 0, y+1 = row 2
    assert table[4].tolist() == [7, 5, 0, 8]
    assert table is torus_neighbours(4, 3)  # one cached read-only table
    with pytest.raises(ValueError):
        table[0, 0] = 1


def test_aircraft_neighbours_count_the_fresh_table_entries():
    env = seer_env.make("aircraft_v0", num_uavs=32, substeps=4, seed=0)
    with pytest.raises(RuntimeError, match="before reset"):
        env.neighbours()
    env.reset()
    for _ in range(5):
        _, _, _, _, infos = env.step({a: np.zeros(4, np.float32) for a in env.agents})
        table = env.neighbours()
        assert table.shape == (32, 16)
        for j, agent in enumerate(env.possible_agents):
            heard = table[j][table[j] >= 0]
            if agent in infos:
                assert len(heard) == infos[agent]["neighbors"]
            assert j not in heard.tolist()
            assert ((heard >= 0) & (heard < 32)).all()
    assert (table >= 0).any()


def test_an_env_without_a_neighbour_structure_says_so():
    from seer_env import PythonModel  # noqa: F401 - a model with no neighbour rule

    env = seer_env.make("pcs_v0")
    env.__class__ = seer_env.SeerParallelEnv  # the generic env declares none
    with pytest.raises(NotImplementedError, match="declares no neighbour structure"):
        env.neighbours()
