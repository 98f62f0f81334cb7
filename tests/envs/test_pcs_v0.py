"""pcs_v0: PettingZoo API, exact determinism, executors, invariants, statistics, validation."""

import functools
import pickle

import cloudpickle
import numpy as np
import pytest
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    state_test,
)
from pettingzoo.utils.conversions import parallel_to_aec

import seer_env
from seer_env.envs import pcs_v0
from seer_env.envs.pcs import PcsEnv
from seer_env.seeding import next_episode_seed as _next_episode_seed

SMALL = dict(width=6, height=4, phones_per_cell=8, move_interval=300.0)

# At reset nothing has happened yet, so every observation (and the state) is
# all zeros; and
# the count observations are unbounded (Box high = inf). Both are correct and
# PettingZoo's api_test warns about both.
pz_warnings = pytest.mark.filterwarnings(
    "ignore:Observation numpy array is all zeros",
    "ignore:State numpy array is all zeros",
    "ignore:Agent's maximum observation space value is infinity",
)


def random_actions(env, rng):
    return {a: int(rng.integers(0, env.channels + 1)) for a in env.agents}


def trace(env, steps, seed=None, action_seed=0):
    """Every output of reset and `steps` steps, as comparable bytes and lists."""
    rng = np.random.default_rng(action_seed)
    obs, infos = env.reset(seed=seed)
    out = [list(obs), b"".join(o.tobytes() for o in obs.values()), list(infos.items())]
    for _ in range(steps):
        obs, rew, term, trunc, infos = env.step(random_actions(env, rng))
        out += [list(obs), b"".join(o.tobytes() for o in obs.values())]
        out += [list(rew.items()), list(term.items()), list(trunc.items()), list(infos.items())]
        out += [env.state().tobytes(), env.sim.digest()]
    out.append(env.stats())
    return out


# -- PettingZoo API ------------------------------------------------------------------------------
@pz_warnings
def test_parallel_env_passes_pettingzoos_parallel_api_test():
    parallel_api_test(pcs_v0.parallel_env(**SMALL), num_cycles=60)


@pz_warnings
def test_aec_envs_pass_pettingzoos_api_test_and_unwrap_to_the_pcs_env():
    api_test(parallel_to_aec(pcs_v0.parallel_env(**SMALL, max_cycles=30)), num_cycles=40)
    api_test(pcs_v0.env(**SMALL, max_cycles=30), num_cycles=40)
    assert isinstance(pcs_v0.raw_env(**SMALL).unwrapped, PcsEnv)
    aec = pcs_v0.env(**SMALL)
    aec.reset(seed=0)
    assert aec.unwrapped.stats()["call_attempts"] == 0


def test_episodes_truncate_at_max_cycles():
    max_cycles_test(pcs_v0)


@pz_warnings
def test_state_passes_pettingzoos_state_test_and_fits_the_state_space():
    state_test(pcs_v0.env(**SMALL), pcs_v0.parallel_env(**SMALL))
    env = pcs_v0.parallel_env(**SMALL)
    env.reset(seed=1)
    assert env.state_space.contains(env.state())
    assert env.state().shape == (2 * 24,)


def test_the_same_seed_gives_the_same_episode():
    parallel_seed_test(functools.partial(pcs_v0.parallel_env, **SMALL), num_cycles=20)


def test_render_passes_pettingzoos_render_test_and_draws_the_grid_as_text(capsys):
    render_test(functools.partial(pcs_v0.env, **SMALL))
    env = pcs_v0.parallel_env(**SMALL, render_mode="ansi")
    env.reset(seed=0)
    env.step({a: 0 for a in env.agents})
    text = env.render()
    lines = text.split("\n")
    assert lines[0].startswith("pcs_v0 t=60 min step 1")
    assert [len(line) for line in lines[1:]] == [6] * 4
    capsys.readouterr()
    human = pcs_v0.parallel_env(**SMALL, render_mode="human")
    human.reset(seed=0)
    assert human.render() is None
    assert capsys.readouterr().out.startswith("pcs_v0 t=0 min step 0")
    assert pcs_v0.parallel_env(**SMALL).render() is None


def test_spaces_agents_and_make():
    env = seer_env.make("pcs_v0", width=3, height=2, channels=4)
    assert isinstance(env, PcsEnv)
    assert env.metadata["name"] == "pcs_v0"
    assert env.possible_agents == [f"cell_{i}" for i in range(6)]
    assert env.action_space("cell_0").n == 5
    assert env.observation_space("cell_3") is env.observation_space("cell_0")
    assert env.observation_space("cell_0").shape == (10,)
    obs, infos = env.reset(seed=0)
    assert env.agents == env.possible_agents and env.agents is not env.possible_agents
    assert list(infos["cell_0"]) == [
        "call_attempts",
        "blocks",
        "busy_lines",
        "handoffs_in",
        "dropped_handoffs",
        "events",
    ]
    assert all(o.dtype == np.float32 for o in obs.values())


def test_episode_truncates_at_max_cycles():
    env = pcs_v0.parallel_env(**SMALL, max_cycles=3)
    env.reset(seed=0)
    for k in range(3):
        _, rew, term, trunc, _ = env.step({a: 1 for a in env.agents})
        assert not any(term.values())
        assert all(trunc.values()) == (k == 2)
        assert all(type(r) is float for r in rew.values())
    assert env.agents == []
    with pytest.raises(RuntimeError):
        env.step({})


# -- exact determinism -----------------------------------------------------------------------------
def test_same_seed_identical_bytes_over_many_steps():
    a = trace(pcs_v0.parallel_env(**SMALL), 80, seed=3)
    b = trace(pcs_v0.parallel_env(**SMALL), 80, seed=3)
    assert a == b
    assert a != trace(pcs_v0.parallel_env(**SMALL), 80, seed=4)


def test_constructor_seed_equals_reset_seed():
    a = trace(pcs_v0.parallel_env(**SMALL, seed=9), 20)
    b = trace(pcs_v0.parallel_env(**SMALL), 20, seed=9)
    assert a == b


def test_reset_without_seed_continues_the_stream():
    a = pcs_v0.parallel_env(**SMALL)
    b = pcs_v0.parallel_env(**SMALL)
    first = trace(a, 10, seed=5)
    assert first == trace(b, 10, seed=5)
    again_a = trace(a, 10)  # reset() without a seed: the next episode
    assert again_a == trace(b, 10)
    assert again_a != first
    assert again_a == trace(pcs_v0.parallel_env(**SMALL), 10, seed=_next_episode_seed(5))


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps])
def test_pickle_mid_episode_continues_identically(dumps):
    env = pcs_v0.parallel_env(**SMALL, max_cycles=50)
    rng = np.random.default_rng(1)
    env.reset(seed=2)
    for _ in range(15):
        env.step(random_actions(env, rng))
    clone = pickle.loads(dumps(env))
    assert clone.stats() == env.stats() and clone.sim.digest() == env.sim.digest()
    assert clone.agents == env.agents and clone.max_cycles == 50
    tail = trace_tail(env, 20, action_seed=7)
    assert tail == trace_tail(clone, 20, action_seed=7)
    # and the clone continues the seed sequence too
    assert trace(env, 5) == trace(clone, 5)


def trace_tail(env, steps, action_seed):
    rng = np.random.default_rng(action_seed)
    out = []
    for _ in range(steps):
        obs, rew, term, trunc, infos = env.step(random_actions(env, rng))
        out += [b"".join(o.tobytes() for o in obs.values()), rew, term, trunc, infos]
    return out + [env.stats(), env.sim.digest()]


def test_pickle_before_reset():
    env = pickle.loads(pickle.dumps(pcs_v0.parallel_env(**SMALL, seed=4)))
    assert trace(env, 5) == trace(pcs_v0.parallel_env(**SMALL, seed=4), 5)


def executor_cases():
    # The serial executor runs on one thread (num_threads > 1 is refused for it).
    return [
        (name, t)
        for name in seer_env.executor_names()
        for t in (1, 2, 4, 8)
        if name != "serial" or t == 1
    ]


@pytest.mark.parametrize("executor,num_threads", executor_cases())
def test_every_executor_and_thread_count_matches_serial(executor, num_threads):
    config = dict(width=12, height=10, handoff_delay=2.0, move_interval=400.0, max_cycles=40)
    expected = trace(pcs_v0.parallel_env(**config), 40, seed=11)
    got = trace(
        pcs_v0.parallel_env(**config, executor=executor, num_threads=num_threads), 40, seed=11
    )
    assert got == expected


@pytest.mark.parametrize("handoff_delay", [0.3, 90.0])  # many rounds per step; L > dt
@pytest.mark.parametrize("executor", [n for n in seer_env.executor_names() if n != "serial"])
def test_other_lookaheads_match_serial(executor, handoff_delay):
    config = dict(width=9, height=7, handoff_delay=handoff_delay, move_interval=200.0)
    expected = trace(pcs_v0.parallel_env(**config), 25, seed=12)
    got = trace(pcs_v0.parallel_env(**config, executor=executor, num_threads=3), 25, seed=12)
    assert got == expected


def test_checked_mode_passes_and_changes_nothing():
    checked = trace(pcs_v0.parallel_env(**SMALL, check=True), 30, seed=6)
    assert checked == trace(pcs_v0.parallel_env(**SMALL), 30, seed=6)


@pytest.mark.parametrize("executor", seer_env.executor_names())
def test_array_path_matches_dict_path(executor):
    config = dict(SMALL, executor=executor, num_threads=1 if executor == "serial" else 2)
    a, b = pcs_v0.parallel_env(**config), pcs_v0.parallel_env(**config)
    a.reset(seed=1)
    b.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(20):
        actions = rng.integers(0, 11, 24)
        obs, rew, term, trunc = a.step_arrays(actions)
        d_obs, d_rew, d_term, d_trunc, _ = b.step(dict(zip(b.agents, actions.tolist())))
        assert obs.tobytes() == np.stack(list(d_obs.values())).tobytes()
        assert rew.tolist() == list(d_rew.values())
        assert term.tolist() == list(d_term.values())
        assert trunc.tolist() == list(d_trunc.values())


# -- model invariants and statistics ---------------------------------------------------------------
def test_pending_phone_events_constant():
    env = pcs_v0.parallel_env(width=5, height=3, phones_per_cell=7, move_interval=50.0)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    assert env.sim.pending_count == 7 * 15
    for _ in range(60):
        env.step(random_actions(env, rng))
        assert env.sim.pending_count == 7 * 15
    assert env.stats()["handoffs"] > 0


def test_counters_are_consistent():
    env = pcs_v0.parallel_env(**SMALL)
    rng = np.random.default_rng(3)
    env.reset(seed=3)
    summed = np.zeros(6, dtype=np.int64)
    for _ in range(30):
        *_, infos = env.step(random_actions(env, rng))
        summed += np.array([list(i.values()) for i in infos.values()]).sum(axis=0)
    stats = env.stats()
    assert summed.tolist() == [stats[k] for k in env.sim.spec["total_keys"]]
    assert stats["events"] == env.sim.events_processed
    assert stats["dropped_handoffs"] <= stats["handoffs"]
    assert stats["blocks"] + stats["busy_lines"] <= stats["call_attempts"]


def test_full_guard_blocks_every_new_call():
    env = pcs_v0.parallel_env(**SMALL, channels=4)
    env.reset(seed=0)
    for _ in range(10):
        _, rew, *_ = env.step({a: 4 for a in env.agents})
    stats = env.stats()
    assert stats["blocks"] == stats["call_attempts"] - stats["busy_lines"] > 0


def test_classic_statistics_with_guard_zero():
    """Classic model (g = 0): busy lines are 1/3 of attempts; attempts ~ phones T / interval."""
    steps = 200
    env = pcs_v0.parallel_env(seed=0, max_cycles=steps)  # 32x32, 16 phones, 10 channels
    env.reset()
    zeros = np.zeros(1024, dtype=np.int64)
    for _ in range(steps):
        env.step_arrays(zeros)
    s = env.stats()
    expected_attempts = 1024 * 16 * steps * 60.0 / 360.0
    assert s["busy_lines"] / s["call_attempts"] == pytest.approx(1 / 3, rel=0.03)
    assert s["call_attempts"] == pytest.approx(expected_attempts, rel=0.03)
    assert 0.0 < s["blocking_probability"] < 0.1


def test_stats_and_state_require_reset():
    env = pcs_v0.parallel_env(**SMALL)
    for call in (env.stats, env.state):
        with pytest.raises(RuntimeError, match="before reset"):
            call()


# -- argument validation ---------------------------------------------------------------------------
INVALID = [
    ("width", 0),
    ("width", 2.5),
    ("width", True),
    ("width", 5000),
    ("height", -1),
    ("height", "4"),
    ("channels", 0),
    ("channels", 65),
    ("phones_per_cell", 0),
    ("phones_per_cell", 1.0),
    ("call_interval", 0.0),
    ("call_interval", float("nan")),
    ("call_duration", -5.0),
    ("call_duration", float("inf")),
    ("move_interval", 0),
    ("move_interval", "slow"),
    ("handoff_delay", 0.0),
    ("handoff_delay", -1.0),
    ("step_minutes", 0.0),
    ("step_minutes", None),
    ("handoff_weight", -0.5),
    ("handoff_weight", float("nan")),
    ("max_cycles", 0),
    ("max_cycles", 1.5),
    ("seed", -1),
    ("seed", 2**64),
    ("seed", "0"),
    ("executor", "warp"),
    ("num_threads", 0),
    ("check", "yes"),
    ("event_budget", -1),
    ("render_mode", "rgb"),  # not one of ansi, human, rgb_array
]


@pytest.mark.parametrize("name,value", INVALID)
def test_invalid_argument_raises_value_error_naming_it(name, value):
    with pytest.raises(ValueError, match=name):
        pcs_v0.parallel_env(**{name: value})


def test_too_many_phones_named():
    with pytest.raises(ValueError, match="phones_per_cell"):
        pcs_v0.parallel_env(width=4096, height=4096, phones_per_cell=8)


def test_invalid_actions_raise_value_error():
    env = pcs_v0.parallel_env(**SMALL, channels=3)
    env.reset(seed=0)
    actions = {a: 0 for a in env.agents}
    with pytest.raises(ValueError, match="cell_0"):
        env.step({**actions, "cell_0": 4})
    with pytest.raises(ValueError):
        env.step({**actions, "cell_0": -1})
    with pytest.raises(ValueError):
        env.step_arrays(np.full(24, 4))
    env.step(actions)  # the env is still usable
