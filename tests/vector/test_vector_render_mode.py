"""A vector env cannot render: ``render_mode`` other than None is refused, naming it.

``gymnasium.make_vec("seer_env/pcs_v1", render_mode="rgb_array")`` used to
return a vector env whose ``render()`` could only raise.
"""

import gymnasium
import pytest

from seer_env import vector

CONFIG = dict(width=2, height=2, executor="serial")
REFUSED = r"render_mode must be None for a vector env .* got 'rgb_array'"


@pytest.mark.parametrize(
    "build",
    [
        lambda **kw: vector.make("pcs_v1", 2, **CONFIG, **kw),
        lambda **kw: vector.make_async("pcs_v1", 2, num_batches=2, **CONFIG, **kw),
        lambda **kw: gymnasium.make_vec("seer_env/pcs_v1", 2, **CONFIG, **kw),
    ],
    ids=["make", "make_async", "gymnasium.make_vec"],
)
def test_a_vector_env_refuses_a_render_mode(build):
    with pytest.raises(ValueError, match=REFUSED):
        build(render_mode="rgb_array")
    env = build(render_mode=None)
    assert env.render_mode is None
    env.close()


def test_gymnasiums_own_vector_envs_still_render_their_copies():
    env = gymnasium.make_vec(
        "seer_env/pcs_v1",
        2,
        vectorization_mode="sync",
        render_mode="rgb_array",
        **CONFIG,
    )
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2
    env.close()
