"""Trainer wrappers render: TorchRL's batched env, and Gymnasium's RecordVideo (moviepy)."""

import numpy as np
import pytest

import seer_env

CONFIG = dict(width=3, height=3, max_cycles=8)


def test_a_batched_env_renders_an_instance_as_its_single_env_does():
    pytest.importorskip("torchrl")
    import torch

    from seer_env.integrations.torchrl import make_batched_env

    env = make_batched_env("pcs_v1", 3, **CONFIG, seed=5)
    zeros = torch.zeros(3, 9, dtype=torch.int64)  # guard 0 in every cell
    env.rollout(4, policy=lambda td: td.set(env.action_key, zeros))
    for i in range(3):
        single = seer_env.make("pcs_v1", **CONFIG, render_mode="rgb_array")
        single.reset(seed=5 + i)  # instance i is seeded with seed + i
        for _ in range(4):
            single.step({a: 0 for a in single.agents})
        frame = env.render(env_index=i)
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
        assert np.array_equal(frame, single.render())
    text = env.render(mode="ansi", env_index=2)
    assert text.startswith("pcs_v1 t=240 min step 4:")
    env.close()


def test_torchrls_pixel_render_transform_records_frames():
    pytest.importorskip("torchrl")
    from torchrl.envs import TransformedEnv
    from torchrl.record import PixelRenderTransform

    from seer_env.integrations.torchrl import make_batched_env

    env = TransformedEnv(
        make_batched_env("pcs_v1", 2, **CONFIG, seed=0), PixelRenderTransform(mode="rgb_array")
    )
    td = env.rollout(3)
    assert td["next", "pixels"] is not None
    env.close()


def test_gymnasiums_record_video_writes_an_episode(tmp_path):
    pytest.importorskip("moviepy")  # the integrations extra brings it
    import gymnasium
    from gymnasium.wrappers import RecordVideo

    env = gymnasium.make("seer_env/pcs_v1", render_mode="rgb_array", **CONFIG)
    env = RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda e: True)
    env.reset(seed=0)
    env.action_space.seed(0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        done = terminated or truncated
    env.close()
    (video,) = (tmp_path / "videos").iterdir()
    assert video.suffix == ".mp4" and video.stat().st_size > 0
