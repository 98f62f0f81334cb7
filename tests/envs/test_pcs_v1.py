"""pcs_v1: the same determinism and executor tests as pcs_v0, the traffic it adds, validation."""

import pickle

import numpy as np
import pytest
from pettingzoo.test import (
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
)
from test_pcs_v0 import executor_cases, random_actions, trace

import seer_env
from seer_env.envs import pcs_v0, pcs_v1
from seer_env.envs.pcs import PcsEnv

SMALL = dict(width=6, height=4, phones_per_cell=8)

# Every observation is zero at reset (nothing has happened yet): correct.
pz_warnings = pytest.mark.filterwarnings(
    "ignore:Observation numpy array is all zeros",
    "ignore:State numpy array is all zeros",
)


# -- PettingZoo API ------------------------------------------------------------------------------
@pz_warnings
def test_parallel_env_passes_pettingzoos_parallel_api_test():
    parallel_api_test(pcs_v1.parallel_env(**SMALL), num_cycles=60)


@pz_warnings
def test_seed_max_cycles_and_render():
    parallel_seed_test(lambda: pcs_v1.parallel_env(**SMALL))
    max_cycles_test(pcs_v1)
    render_test(lambda render_mode=None: pcs_v1.env(**SMALL, render_mode=render_mode))


def test_spaces_are_bounded_and_named():
    env = seer_env.make("pcs_v1")
    assert isinstance(env, PcsEnv) and env.metadata["name"] == "pcs_v1"
    assert len(env.possible_agents) == 64 and env.max_cycles == 96
    space = env.observation_space("cell_0")
    assert space.shape == (12,) and np.isfinite(space.high).all()
    assert space.high[2:6].tolist() == [8.0] * 4
    assert space.low[10:].tolist() == [-1.0, -1.0]
    obs, _ = env.reset(seed=0)
    assert env.observation_space("cell_0").contains(obs["cell_0"])


# -- exact determinism (pcs_v0's tests, on the varying traffic) -----------------------------------
def test_same_seed_identical_bytes():
    a = trace(pcs_v1.parallel_env(**SMALL), 60, seed=3)
    assert a == trace(pcs_v1.parallel_env(**SMALL), 60, seed=3)
    assert a != trace(pcs_v1.parallel_env(**SMALL), 60, seed=4)


@pytest.mark.parametrize("executor,num_threads", executor_cases())
def test_every_executor_and_thread_count_matches_serial(executor, num_threads):
    config = dict(width=12, height=10, handoff_delay=2.0, max_cycles=40)
    expected = trace(pcs_v1.parallel_env(**config), 40, seed=11)
    got = trace(
        pcs_v1.parallel_env(**config, executor=executor, num_threads=num_threads), 40, seed=11
    )
    assert got == expected


@pytest.mark.parametrize("handoff_delay", [0.3, 90.0])
@pytest.mark.parametrize("executor", [n for n in seer_env.executor_names() if n != "serial"])
def test_other_lookaheads_match_serial(executor, handoff_delay):
    config = dict(width=9, height=7, handoff_delay=handoff_delay)
    expected = trace(pcs_v1.parallel_env(**config), 25, seed=12)
    got = trace(pcs_v1.parallel_env(**config, executor=executor, num_threads=3), 25, seed=12)
    assert got == expected


def test_checked_mode_and_pickle_change_nothing():
    expected = trace(pcs_v1.parallel_env(**SMALL), 30, seed=6)
    assert trace(pcs_v1.parallel_env(**SMALL, check=True), 30, seed=6) == expected
    env = pcs_v1.parallel_env(**SMALL)
    env.reset(seed=6)
    rng = np.random.default_rng(0)
    for _ in range(10):
        env.step(random_actions(env, rng))
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(20):  # the clock (time of day) survives the round trip
        actions = random_actions(env, rng)
        a, b = env.step(actions), clone.step(actions)
        assert [list(x.items()) for x in a[1:]] == [list(x.items()) for x in b[1:]]
        assert np.array_equal(np.stack(list(a[0].values())), np.stack(list(b[0].values())))


# -- the traffic ---------------------------------------------------------------------------------
def hours(obs: np.ndarray) -> np.ndarray:
    return np.round(np.arctan2(obs[:, 10], obs[:, 11]) / (2 * np.pi) * 24) % 24


def test_time_of_day_observation_counts_hours():
    env = pcs_v1.parallel_env(**SMALL, max_cycles=30)
    env.reset(seed=0)
    assert hours(env.sim.observations()).tolist() == [0] * 24
    for k in range(1, 30):
        obs, *_ = env.step_arrays(np.zeros(24, dtype=np.int64))
        assert hours(obs).tolist() == [k % 24] * 24


def per_hour(counter: str, **config) -> np.ndarray:
    """Mean of ``counter`` per cell for each hour of the day over 4 days, guard 0."""
    env = pcs_v1.parallel_env(width=8, height=8, **config, max_cycles=96)
    env.reset(seed=1)
    totals = np.zeros(24)
    for k in range(96):
        *_, infos = env.step({a: 0 for a in env.agents})
        totals[k % 24] += sum(i[counter] for i in infos.values())
    return totals / (4 * 64)


def test_daily_profile_and_rush_hours_show_in_the_counters():
    attempts = per_hour("call_attempts", rush_mobility=0.0, hotspot_gain=0.0)
    # Step k covers hours k..k+1: noon is busiest, midnight quietest (1.5 vs 0.5).
    assert attempts[11:13].mean() > 2 * attempts[[23, 0]].mean()
    handoffs = per_hour("handoffs_in")
    assert handoffs[[7, 8, 16, 17]].mean() > 5 * handoffs[[1, 2, 3, 12, 22]].mean()


def test_hot_spot_moves_across_the_grid():
    """The hot spot is at cell (0, 0) at midnight and at (4, 4) at noon."""
    env = pcs_v1.parallel_env(
        width=8, height=8, daily_swing=0.0, rush_mobility=0.0, hotspot_gain=3.0, max_cycles=96
    )
    env.reset(seed=2)
    attempts = np.zeros((2, 64))
    for k in range(96):
        *_, infos = env.step({a: 0 for a in env.agents})
        if k % 24 in (23, 0, 11, 12):
            attempts[int(k % 24 in (11, 12))] += [i["call_attempts"] for i in infos.values()]
    x, y = np.arange(64) % 8, np.arange(64) // 8
    for row, centre in ((0, 0), (1, 4)):
        d = np.hypot(np.minimum(abs(x - centre), 8 - abs(x - centre)),
                     np.minimum(abs(y - centre), 8 - abs(y - centre)))  # fmt: skip
        assert attempts[row][d <= 1].mean() > 2 * attempts[row][d >= 3].mean()


def test_constant_traffic_is_pcs_v0():
    """With every traffic knob off, v1 is v0 plus the time-of-day features."""
    flat = dict(daily_swing=0.0, hotspot_gain=0.0, rush_mobility=0.0, count_cap=1e9)
    common = dict(SMALL, call_interval=360.0, handoff_weight=5.0, move_interval=300.0)
    old = pcs_v0.parallel_env(**common)
    new = pcs_v1.parallel_env(**common, **flat)
    old.reset(seed=5)
    new.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(30):
        actions = rng.integers(0, 11, 24)
        o_obs, o_rew, *_ = old.step_arrays(actions)
        n_obs, n_rew, *_ = new.step_arrays(actions)
        assert n_obs[:, :10].tobytes() == o_obs.tobytes()
        assert n_rew.tobytes() == o_rew.tobytes()
    assert new.stats() == old.stats()


def test_counts_are_capped():
    env = pcs_v1.parallel_env(**SMALL, count_cap=0.5, hotspot_gain=5.0)
    env.reset(seed=0)
    highest = 0.0
    for _ in range(30):
        obs, *_ = env.step_arrays(np.zeros(24, dtype=np.int64))
        highest = max(highest, float(obs[:, 2:6].max()))
    assert highest == 0.5


def test_pending_phone_events_constant():
    env = pcs_v1.parallel_env(width=5, height=3, phones_per_cell=7)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _ in range(48):
        env.step(random_actions(env, rng))
        assert env.sim.pending_count == 7 * 15
    assert env.stats()["handoffs"] > 0


# -- argument validation ---------------------------------------------------------------------------
INVALID = [
    ("day_minutes", 0.0),
    ("daily_swing", 1.0),
    ("daily_swing", -0.1),
    ("hotspot_gain", -1.0),
    ("hotspot_gain", float("nan")),
    ("hotspot_radius", 0.0),
    ("rush_mobility", -1.0),
    ("count_cap", 0.0),
    ("width", 0),
    ("handoff_weight", -1.0),
]


@pytest.mark.parametrize("name,value", INVALID)
def test_invalid_argument_raises_value_error_naming_it(name, value):
    with pytest.raises(ValueError, match=name):
        pcs_v1.parallel_env(**{name: value})
