"""aircraft_v0: PettingZoo API, rendering, crashes, exact determinism, physics sanity."""

import functools
import hashlib
import pickle

import cloudpickle
import numpy as np
import pytest
from executor_cases import executor_configs
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    state_test,
)
from pettingzoo.utils.conversions import parallel_to_aec

import seer_env
from seer_env.envs import aircraft_v0
from seer_env.envs.aircraft import AircraftEnv, uav_states

SMALL = dict(num_uavs=16, arena_size=20.0, ceiling=30.0)
# Dense enough for near misses and crashes within ~100 steps.
DENSE = dict(num_uavs=64, arena_size=30.0, ceiling=30.0, safe_radius=3.0)


def sim_for(executor="serial", num_threads=1, model="aircraft", **config):
    return seer_env.Simulation(
        model, {**DENSE, **config}, executor=executor, num_threads=num_threads
    )


def random_actions(rng, n, scale=1.0):
    return (rng.uniform(-1.0, 1.0, (n, 4)) * scale).astype(np.float32)


# -- PettingZoo ---------------------------------------------------------------------------------
def test_parallel_env_passes_pettingzoos_parallel_api_test():
    parallel_api_test(aircraft_v0.parallel_env(**SMALL, seed=0), num_cycles=200)


def test_aec_envs_pass_pettingzoos_api_test():
    api_test(parallel_to_aec(aircraft_v0.parallel_env(**SMALL, seed=0)), num_cycles=50)
    api_test(aircraft_v0.env(**SMALL, seed=1), num_cycles=20)


def test_episodes_truncate_at_max_cycles():
    max_cycles_test(aircraft_v0)


def test_state_passes_pettingzoos_state_test():
    state_test(
        aircraft_v0.env(**SMALL, seed=0), aircraft_v0.parallel_env(**SMALL, seed=0), num_cycles=20
    )


def test_the_same_seed_gives_the_same_episode():
    parallel_seed_test(functools.partial(aircraft_v0.parallel_env, **SMALL), num_cycles=20)


def test_make_raw_env_and_spaces():
    assert "aircraft_v0" in seer_env.env_names()
    env = seer_env.make("aircraft_v0", num_uavs=8, k_neighbors=2)
    assert isinstance(env, AircraftEnv)
    assert env.metadata["name"] == "aircraft_v0"
    assert env.possible_agents == [f"uav_{i}" for i in range(8)]
    space = env.observation_space("uav_3")
    assert space is env.observation_space("uav_3") and space.shape == (17 + 6 * 2,)
    assert env.action_space("uav_0").shape == (4,)
    assert env.state_space.shape == (8 * 8,)
    raw = aircraft_v0.raw_env(num_uavs=4)
    raw.reset(seed=0)
    assert raw.agents == ["uav_0", "uav_1", "uav_2", "uav_3"]


def test_agents_leave_when_they_crash():
    env = aircraft_v0.parallel_env(**SMALL, seed=3)
    env.reset()
    gone: set[str] = set()
    causes = set()
    for _ in range(60):
        live = list(env.agents)
        # Even agents cut their motors and fall; odd ones hover.
        actions = {
            a: np.array([-1.0 if int(a[4:]) % 2 == 0 else 0.0, 0, 0, 0], np.float32) for a in live
        }
        obs, rew, term, trunc, infos = env.step(actions)
        assert list(obs) == live and list(term) == live
        assert not gone & set(env.agents)  # nobody comes back
        for agent in live:
            if term[agent]:
                assert agent not in env.agents
                assert infos[agent]["crash_cause"] == 1  # ground
                assert rew[agent] <= -10.0 + 1.0  # the crash penalty dominates
                gone.add(agent)
                causes.add(infos[agent]["crash_cause"])
            else:
                assert agent in env.agents
    assert gone == {f"uav_{i}" for i in range(0, 16, 2)}
    assert env.agents == [f"uav_{i}" for i in range(1, 16, 2)]


def test_battery_empty_and_out_of_bounds_terminate():
    sim = seer_env.Simulation("aircraft", {**SMALL, "battery_capacity": 50.0})
    sim.reset(0)
    for _ in range(5):
        sim.step(np.zeros((16, 4), np.float32))
    assert sim.terminations().all()
    assert (sim.infos()[:, 4] == 3).all()
    sim = seer_env.Simulation("aircraft", SMALL)
    sim.reset(0)
    for _ in range(40):
        sim.step(np.tile(np.float32([1.0, 0, 0, 0]), (16, 1)))  # full thrust: through the ceiling
    assert (sim.infos()[:, 4] == 2).all()


def test_rgb_array_and_ansi_draw_the_flight_and_an_unknown_mode_is_refused():
    env = aircraft_v0.parallel_env(**SMALL, seed=0, render_mode="rgb_array")
    env.reset()
    first = env.render()
    assert first.shape == (256, 256, 3) and first.dtype == np.uint8
    for _ in range(5):
        env.step({a: np.float32([0.5, 1, 0, 0]) for a in env.agents})
    assert not np.array_equal(first, env.render())
    env = aircraft_v0.parallel_env(**SMALL, seed=0, render_mode="ansi")
    env.reset()
    text = env.render()
    assert text.startswith("aircraft_v0 t=0.00 s step 0: 16/16 flying")
    assert sum(c == "o" or c.isdigit() for line in text.splitlines()[2:-1] for c in line) > 0
    env.close()
    assert aircraft_v0.parallel_env(**SMALL).render() is None
    with pytest.raises(ValueError, match="render_mode"):
        aircraft_v0.parallel_env(render_mode="window")


def test_the_picture_shows_each_uav_its_goal_and_the_way_between():
    env = aircraft_v0.parallel_env(**SMALL, seed=0, render_mode="rgb_array")
    env.reset()
    image = env.render()
    states = uav_states(env.sim)
    scale = (256 - 1) / (2.0 * env.arena_size)

    def pixel(x, y):
        return int((env.arena_size - y) * scale), int((x + env.arena_size) * scale)

    for uav in range(4):
        pos, goal = states["body"][uav, 0:2], states["goal"][uav, 0:2]
        if np.linalg.norm((goal - pos) * scale) < 8:
            continue  # too close to see a line between the marks
        assert tuple(image[pixel(*goal)]) == (60, 200, 90)  # the goal mark
        assert image[pixel(*pos)].max() > 80  # the UAV's square
        r, c = pixel(*((pos + goal) / 2))
        around = image[r - 1 : r + 2, c - 1 : c + 2].reshape(-1, 3)
        assert (around != (24, 28, 36)).any(axis=1).any()  # not all background: the line
    env.close()


def test_human_render_prints_the_ansi_text_headless(capsys):
    env = aircraft_v0.parallel_env(**SMALL, seed=0, render_mode="human")
    env.reset()
    assert env.render() is None
    assert capsys.readouterr().out.startswith("aircraft_v0 t=0.00 s step 0: 16/16 flying")


@pytest.mark.parametrize(
    "name,value",
    [
        ("num_uavs", 0),
        ("num_uavs", 2.5),
        ("substeps", 0),
        ("wind_modes", -1),
        ("beacon_every", 0),
        ("comm_radius", 0.0),
        ("comm_latency", 0.0),
        ("comm_latency", float("nan")),
        ("safe_radius", -1.0),
        ("k_neighbors", 33),
        ("k_neighbors", 17),  # > max_neighbors (16)
        ("max_neighbors", 0),
        ("neighbor_timeout", -0.1),
        ("dt", 0.0),
        ("arena_size", -5.0),
        ("ceiling", 0.0),
        ("wind_speed", -1.0),
        ("wind_seed", -1),
        ("drag", "x"),
        ("gravity", float("inf")),
        ("max_rate", 0.0),
        ("rate_gain", -1.0),
        ("battery_capacity", 0.0),
        ("power_idle", -1.0),
        ("power_thrust", -1.0),
        ("power_rate", -1.0),
        ("near_miss_penalty", -1.0),
        ("energy_weight", -1.0),
        ("crash_penalty", -1.0),
        ("max_cycles", 0),
        ("seed", -1),
        ("executor", "nope"),
        ("num_threads", 0),
        ("check", "yes"),
    ],
)
def test_invalid_argument_raises_value_error_naming_it(name, value):
    with pytest.raises(ValueError, match=name):
        aircraft_v0.parallel_env(**{"num_uavs": 4, name: value})


def test_cpp_validates_config_too():
    with pytest.raises(ValueError, match="k_neighbors"):
        seer_env.Simulation("aircraft", {"k_neighbors": 20, "max_neighbors": 8})
    with pytest.raises(ValueError, match="substeps"):
        seer_env.Simulation("aircraft", {"substeps": 0})


def test_invalid_actions_raise_value_error():
    env = aircraft_v0.parallel_env(num_uavs=2, seed=0)
    env.reset()
    with pytest.raises(ValueError, match="uav_1.*NaN"):  # out of range is clipped; NaN is not
        env.step({"uav_0": np.zeros(4, np.float32), "uav_1": np.full(4, np.nan, np.float32)})
    with pytest.raises(ValueError, match="uav_1"):
        env.step({"uav_0": np.zeros(4, np.float32), "uav_1": np.zeros(3, np.float32)})


def test_pickle_mid_episode_continues_identically():
    rng = np.random.default_rng(0)
    env = aircraft_v0.parallel_env(**SMALL, seed=4)
    env.reset()
    for _ in range(10):
        env.step({a: random_actions(rng, 1)[0] for a in env.agents})
    for dumps in (pickle.dumps, cloudpickle.dumps):
        copy = pickle.loads(dumps(env))
        assert copy.agents == env.agents and copy.sim.digest() == env.sim.digest()
    actions = random_actions(rng, 16)
    out_a = env.step_arrays(actions)
    out_b = copy.step_arrays(actions)
    for x, y in zip(out_a, out_b):
        assert x.tobytes() == y.tobytes()


# -- exact determinism --------------------------------------------------------------------------
def trace(executor, num_threads, seed, steps=120, model="aircraft"):
    """Per-step SHA-256 over the digest and every output's bytes, and final counters."""
    sim = sim_for(executor, num_threads, model)
    sim.reset(seed)
    rng = np.random.default_rng(seed)
    hashes = []
    for _ in range(steps):
        alive = (~sim.terminations()).astype(np.uint8)
        sim.step(random_actions(rng, 64, scale=0.2), alive)  # crashes spread over the run
        h = hashlib.sha256(sim.digest().to_bytes(8, "little"))
        for out in (
            sim.observations(),
            sim.rewards(),
            sim.terminations(),
            sim.infos(),
            sim.state(),
        ):
            h.update(out.tobytes())
        hashes.append(h.hexdigest())
    infos = sim.infos()
    return hashes, int(infos[:, 1].sum()), int(sim.terminations().sum())


@functools.cache
def serial_trace(seed, model="aircraft"):
    return trace("serial", 1, seed, model=model)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "executor,num_threads", [c for c in executor_configs(8) if c[1] in (1, 2, 4, 8)]
)
def test_every_executor_and_thread_count_matches_serial(executor, num_threads, seed):
    expected, near_misses, crashes = serial_trace(seed)
    # The run exercises what can go wrong: beacons, near misses and crashes.
    assert near_misses > 0 and 0 < crashes < 64
    got, _, _ = trace(executor, num_threads, seed)
    assert got == expected


@pytest.mark.parametrize(
    "executor,num_threads", [c for c in executor_configs(8) if c[1] in (1, 2, 8)]
)
def test_aircraft_v1_every_executor_and_thread_count_matches_serial(executor, num_threads):
    """The same check on aircraft_v1's model (its rescaled reward, wind and defaults)."""
    expected, near_misses, crashes = serial_trace(0, "aircraft_v1")
    assert near_misses > 0 and crashes > 0
    got, _, _ = trace(executor, num_threads, 0, model="aircraft_v1")
    assert got == expected


@pytest.mark.parametrize("executor,num_threads", [c for c in executor_configs(4) if c[1] != 3])
def test_checked_mode_passes_and_changes_nothing(executor, num_threads):
    digests = []
    for check in (False, True):
        sim = seer_env.Simulation(
            "aircraft", SMALL, executor=executor, num_threads=num_threads, check=check
        )
        sim.reset(9)
        rng = np.random.default_rng(9)
        for _ in range(8):
            sim.step(random_actions(rng, 16), (~sim.terminations()).astype(np.uint8))
        digests.append(sim.digest())
    assert digests[0] == digests[1]


def test_same_seed_same_bytes_and_dict_path_matches_array_path():
    rng = np.random.default_rng(1)
    a = aircraft_v0.parallel_env(**SMALL, seed=8)
    b = aircraft_v0.parallel_env(**SMALL, seed=8)
    obs_a, _ = a.reset()
    obs_b, _ = b.reset()
    assert all(obs_a[k].tobytes() == obs_b[k].tobytes() for k in obs_a)
    for _ in range(30):
        if not a.agents:
            break
        actions = random_actions(rng, 16)
        live = list(a.agents)
        out = a.step({ag: actions[int(ag[4:])] for ag in live})
        obs, rew, term, trunc = b.step_arrays(actions)
        for ag in live:
            i = int(ag[4:])
            assert out[0][ag].tobytes() == obs[i].tobytes()
            assert out[1][ag] == rew[i] and out[2][ag] == term[i]
        assert a.agents == b.agents


# -- physics sanity -----------------------------------------------------------------------------
@pytest.mark.parametrize("wind", [dict(wind_speed=0.0), dict(wind_modes=0)])
def test_hover_thrust_holds_altitude_without_wind(wind):
    sim = seer_env.Simulation("aircraft", {**SMALL, **wind})
    sim.reset(0)
    start = uav_states(sim)["body"].copy()
    for _ in range(50):
        sim.step(np.zeros((16, 4), np.float32))  # thrust 0 = weight
    body = uav_states(sim)["body"]
    assert np.array_equal(body[:, 0:3], start[:, 0:3])  # exactly: g (1 + 0) - g = 0
    assert not body[:, 3:6].any() and not sim.terminations().any()


def test_wind_moves_a_hovering_uav():
    sim = seer_env.Simulation("aircraft", SMALL)
    sim.reset(0)
    start = uav_states(sim)["body"][:, 0:3].copy()
    for _ in range(20):
        sim.step(np.zeros((16, 4), np.float32))
    assert np.abs(uav_states(sim)["body"][:, 0:3] - start).max() > 0.01


def test_energy_spent_grows_with_thrust():
    used = []
    for thrust in (-0.8, -0.3, 0.0, 0.3, 0.8):
        sim = seer_env.Simulation("aircraft", {**SMALL, "ceiling": 1000.0})
        sim.reset(0)
        for _ in range(10):
            sim.step(np.tile(np.float32([thrust, 0, 0, 0]), (16, 1)))
        assert not sim.terminations().any()
        used.append(1e5 - uav_states(sim)["energy"])
    for lower, higher in zip(used, used[1:]):
        assert (higher > lower).all()


def test_rate_commands_tilt_and_stay_unit_quaternions():
    sim = seer_env.Simulation("aircraft", {**SMALL, "wind_speed": 0.0})
    sim.reset(0)
    for _ in range(3):
        sim.step(np.tile(np.float32([0.0, 0.5, 0, 0]), (16, 1)))  # roll
    body = uav_states(sim)["body"]
    q = body[:, 6:10]
    np.testing.assert_allclose((q * q).sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (np.abs(q[:, 1]) > 0.1).all()  # rolled about x
    assert (body[:, 4] < 0).all()  # positive roll tilts thrust toward -y


def test_no_nan_or_inf_under_random_actions_for_1000_steps():
    # An airspace so large that every UAV keeps flying (and tumbling) for all
    # 1000 steps: the integrator, not a crash, has to keep the state finite.
    sim = seer_env.Simulation("aircraft", {"num_uavs": 32, "arena_size": 1e4, "ceiling": 1e4})
    sim.reset(0)
    rng = np.random.default_rng(0)
    for _ in range(1000):
        sim.step(random_actions(rng, 32))
        assert np.isfinite(sim.observations()).all()
        assert np.isfinite(sim.rewards()).all()
    states = uav_states(sim)
    assert not sim.terminations().any()
    for field in ("body", "energy", "t_state"):
        assert np.isfinite(states[field]).all()
    speed = np.linalg.norm(states["body"][:, 3:6], axis=1)
    assert speed.max() < 100.0  # drag bounds the speed


def test_the_derived_arena_size_is_the_models_own():
    env = aircraft_v0.parallel_env(num_uavs=64, executor="serial")
    assert env.arena_size == env.sim.spec["derived_params"]["arena_size"] == 6.25 * 8.0
    env = aircraft_v0.parallel_env(num_uavs=64, arena_size=120.0, executor="serial")
    assert env.arena_size == 120.0
    assert seer_env.SeerParallelEnv("pcs", {}).sim.spec["derived_params"] == {}
