"""Gymnasium's registry: ``gymnasium.make("seer_env/pcs_v1")``, ``make_vec``, after the import."""

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import seer_env
from seer_env.integrations.gymnasium import JointEnv
from seer_env.vector import SeerVectorEnv

PCS = dict(width=4, height=4, phones_per_cell=4)


@pytest.mark.parametrize("name", seer_env.env_names(decisions=False))
def test_every_lockstep_env_is_registered_under_the_seer_env_namespace(name):
    assert f"seer_env/{name}" in gymnasium.registry


def test_make_gives_one_instance_as_a_gymnasium_env():
    env = gymnasium.make("seer_env/pcs_v1", **PCS)
    assert isinstance(env.unwrapped, JointEnv)
    obs, _ = env.reset(seed=3)
    single = seer_env.make("pcs_v1", **PCS)
    first, _ = single.reset(seed=3)
    assert obs.tobytes() == np.stack([first[a] for a in single.possible_agents]).tobytes()
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_make_vec_gives_the_vector_env_with_num_envs_instances():
    venv = gymnasium.make_vec("seer_env/pcs_v1", num_envs=3, seed=0, **PCS)
    assert isinstance(venv, SeerVectorEnv)
    assert venv.num_instances == 3 and venv.num_envs == 3 * 16  # rows, as vector.make's
    ref = seer_env.vector.make("pcs_v1", 3, seed=0, **PCS)
    assert venv.reset()[0].tobytes() == ref.reset()[0].tobytes()
    sync = gymnasium.make_vec("seer_env/pcs_v0", num_envs=2, vectorization_mode="sync", **PCS)
    assert sync.reset(seed=0)[0].shape == (2, 16, 10)
    for v in (venv, ref, sync):
        v.close()


def test_the_module_prefix_registers_without_an_import():
    code = (
        "import gymnasium; e = gymnasium.make('seer_env:seer_env/pcs_v0', width=2, height=2); "
        "print(e.reset(seed=0)[0].shape)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "(4, 10)"


def test_pcs_renders_rgb_arrays_and_the_vector_env_says_why_it_does_not():
    env = gymnasium.make("seer_env/pcs_v0", render_mode="rgb_array", width=8, height=4)
    env.reset(seed=0)
    for _ in range(3):
        env.step(env.action_space.sample())
    image = env.render()
    assert image.dtype == np.uint8 and image.shape == (128, 256, 3)
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 1
    venv = seer_env.vector.make("pcs_v0", 2, **PCS)
    with pytest.raises(NotImplementedError, match="keeps no per-instance env to render"):
        venv.render()


@pytest.mark.parametrize("name", seer_env.env_names(decisions=True))
def test_an_env_whose_agents_act_when_they_ask_is_not_registered(name):
    assert f"seer_env/{name}" not in gymnasium.registry
