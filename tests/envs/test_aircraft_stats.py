"""aircraft's ``stats()``: the swarm's totals since reset, as pcs's ``stats()`` for cells."""

import numpy as np
import pytest

from seer_env.envs import aircraft_v0, aircraft_v1


@pytest.mark.parametrize("version", [aircraft_v0, aircraft_v1])
def test_stats_sum_what_the_steps_reported(version):
    env = version.parallel_env(num_uavs=12, arena_size=15.0, seed=2)
    with pytest.raises(RuntimeError, match=r"stats\(\) called before reset\(\)"):
        env.unwrapped.stats()
    env.reset()
    fresh = env.unwrapped.stats()
    assert fresh["uavs"] == fresh["flying"] == 12
    assert fresh["near_misses"] == fresh["energy_used"] == fresh["crash_fraction"] == 0
    for agent in env.possible_agents:
        env.action_space(agent).seed(0)
    crashed, near_misses = {}, {}
    while env.agents:
        actions = {a: env.action_space(a).sample() for a in env.agents}
        _, _, terminations, _, infos = env.step(actions)
        for agent, info in infos.items():
            near_misses[agent] = info["near_misses_total"]
            if terminations[agent]:
                crashed[agent] = info["crash_cause"]
    stats = env.unwrapped.stats()
    assert stats["flying"] == 12 - len(crashed)
    by_cause = [sum(1 for c in crashed.values() if c == cause) for cause in (1, 2, 3)]
    assert [stats["crashed_ground"], stats["crashed_out_of_bounds"]] == by_cause[:2]
    assert stats["battery_empty"] == by_cause[2]
    assert stats["crash_fraction"] == (by_cause[0] + by_cause[1]) / 12 > 0  # random actions crash
    assert stats["near_misses"] == sum(near_misses.values())
    assert 0 < stats["energy_used"] <= 12 * env.unwrapped.battery_capacity
    assert stats["beacons_received"] > 0 and np.isfinite(stats["mean_goal_distance"])
    assert set(stats) == {
        "uavs", "flying", "crashed_ground", "crashed_out_of_bounds", "battery_empty",
        "near_misses", "beacons_received", "energy_used", "crash_fraction",
        "mean_goal_distance",
    }  # fmt: skip
