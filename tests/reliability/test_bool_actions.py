"""A bool is not an action: every path refuses ``True``, ``np.bool_`` and bool arrays.

(A bool is neither an action index nor a coordinate; the low-level
``Simulation`` always refused them, and now every path above it agrees.)
Each refusal changes nothing: the env then steps like one that never saw it.
"""

import numpy as np
import pytest
from envcases import make

import seer_env
from seer_env import vector
from seer_env.vector import SeerAsyncVectorEnv


def test_dict_path_and_step_arrays_refuse_bools():
    env = make("pcs_v1")
    env.reset(seed=0)
    digest = env.sim.digest()
    first = env.agents[0]
    for value in (True, np.bool_(False)):
        with pytest.raises(ValueError, match=rf"actions\['{first}'\] .*a bool is not an action"):
            env.step({a: value if a == first else 0 for a in env.agents})
    n = len(env.possible_agents)
    for given in (np.ones(n, bool), [False] * n):
        with pytest.raises(ValueError, match="a bool is not an action"):
            env.step_arrays(given)
    assert env.sim.digest() == digest


def test_box_paths_refuse_bool_arrays():
    env = make("aircraft_v1")
    env.reset(seed=0)
    digest = env.sim.digest()
    first = env.agents[0]
    row = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=rf"actions\['{first}'\] must be a real vector"):
        env.step({a: np.ones(4, bool) if a == first else row for a in env.agents})
    with pytest.raises(ValueError, match="a bool is not an action"):
        env.step_arrays(np.zeros((len(env.possible_agents), 4), bool))
    assert env.sim.digest() == digest


@pytest.mark.parametrize("cls", ["sync", "async"])
def test_vector_envs_refuse_bool_arrays(cls):
    def build():
        if cls == "sync":
            return vector.make("pcs_v0", num_envs=2, width=2, height=2, executor="serial")
        return SeerAsyncVectorEnv("pcs_v0", num_envs=2, num_batches=2, width=2, height=2)

    venv, shadow = build(), build()
    for v in (venv, shadow):
        v.reset(seed=1)
    with pytest.raises(ValueError, match="dtype bool"):
        venv.step(np.ones(venv.num_envs, bool))
    actions = np.ones(venv.num_envs, np.int64)
    out, ref = venv.step(actions), shadow.step(actions)
    assert out[0].tobytes() == ref[0].tobytes()
    venv.close()
    shadow.close()


def test_the_low_level_simulation_refuses_bools():
    sim = seer_env.Simulation("pcs", {"width": 2, "height": 2})
    sim.reset(0)
    with pytest.raises(ValueError):
        sim.step(np.ones(4, bool))


def test_torchrl_batched_env_refuses_bool_actions():
    pytest.importorskip("torchrl")
    import torch

    from seer_env.integrations.torchrl import make_batched_env

    env = make_batched_env("pcs_v0", num_envs=2, width=2, height=2, seed=0)
    td = env.reset()
    td.set(env.action_key, torch.ones(2, env.n_agents, dtype=torch.bool))
    with pytest.raises(ValueError, match="a bool is not an action"):
        env.step(td)
    env.close()
