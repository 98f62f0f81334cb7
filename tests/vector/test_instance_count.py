"""The vector envs' instance count is ``num_instances``; ``num_envs`` counts rows (Gymnasium's)."""

import numpy as np
import pytest
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from seer_env import vector

CFG = dict(width=2, height=2, phones_per_cell=2, executor="serial")


@pytest.mark.parametrize("build", [vector.make, vector.make_async])
def test_num_instances_counts_instances_and_num_envs_counts_rows(build):
    by_position = build("pcs_v0", 2, **CFG)
    by_name = build("pcs_v0", num_instances=2, **CFG)
    for venv in (by_position, by_name):
        assert venv.num_instances == 2
        assert venv.agents_per_instance == 4
        assert venv.num_envs == 8  # Gymnasium's batch size: one row per agent
        assert venv.observation_space.shape[0] == venv.num_envs
        venv.close()


@pytest.mark.parametrize("build", [vector.make, vector.make_async])
def test_the_num_envs_keyword_is_deprecated_and_still_counts_instances(build):
    with pytest.warns(DeprecationWarning, match=r"pass num_instances= .* counts agent rows"):
        venv = build("pcs_v0", num_envs=2, **CFG)
    assert (venv.num_instances, venv.num_envs) == (2, 8)
    venv.close()


def test_both_or_neither_count_is_a_clear_error():
    with pytest.raises(ValueError, match="pass num_instances only"):
        vector.make("pcs_v0", 2, num_envs=2, **CFG)
    with pytest.raises(ValueError, match="num_instances is required"):
        vector.make("pcs_v0", **CFG)
    with pytest.raises(ValueError, match=r"num_instances must be in \[1, 65536\], got 0"):
        vector.make("pcs_v0", num_instances=0, **CFG)


def test_record_episode_statistics_reports_one_episode_per_agent_row():
    venv = RecordEpisodeStatistics(vector.make("pcs_v0", 2, max_cycles=3, seed=0, **CFG))
    venv.reset(seed=0)
    total = np.zeros(venv.num_envs)
    for _ in range(3):
        _, rewards, _, _, infos = venv.step(venv.action_space.sample())
        total += rewards
    assert infos["_episode"].all() and infos["episode"]["r"].shape == (8,)
    np.testing.assert_allclose(infos["episode"]["r"], total)
    # An instance's return is the sum of its agents' rows.
    per_instance = infos["episode"]["r"].reshape(2, 4).sum(axis=1)
    np.testing.assert_allclose(per_instance, total.reshape(2, 4).sum(axis=1))
    venv.close()
