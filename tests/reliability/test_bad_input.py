"""The bad-input matrix: every rejected call raises a clear error and changes nothing.

Each case makes one bad call on an env that is mid-episode (or not yet reset),
checks the error type and message (ValueError naming the argument and the
value; RuntimeError for call order), then steps the env and a shadow env that
never saw the bad call, and compares the outputs byte for byte.
"""

import threading
import time

import numpy as np
import pytest

import seer_env
from seer_env import vector
from seer_env.envs import aircraft_v0, pcs_v0


def small_pcs(**kw):
    cfg = dict(width=2, height=2, phones_per_cell=2, executor="serial", seed=0, max_cycles=50)
    cfg.update(kw)
    return pcs_v0.parallel_env(**cfg)


def small_aircraft(**kw):
    cfg = dict(num_uavs=4, substeps=2, executor="serial", seed=0, max_cycles=50)
    cfg.update(kw)
    return aircraft_v0.parallel_env(**cfg)


ENVS = {
    "pcs": small_pcs,
    "pcs-parallel": lambda: small_pcs(executor="parallel", num_threads=2),
    "aircraft": small_aircraft,
}


def zero_actions(env):
    space = env.action_space(env.possible_agents[0])
    zero = 0 if env._discrete else np.zeros(space.shape, np.float32)
    return {a: zero for a in env.agents}


def crash_first_uav(*envs):
    """Fly uav_0 of each (identical) aircraft env up until it crashes; the others hover."""
    for _ in range(40):
        if "uav_0" not in envs[0].agents:
            return
        for env in envs:
            actions = np.zeros((len(env.possible_agents), 4), np.float32)
            actions[0] = 1.0
            env.step_arrays(actions)
    raise AssertionError("uav_0 did not crash")


def assert_same_step(env, shadow):
    """Step both envs with the same valid actions; outputs must be identical."""
    out, ref = env.step(zero_actions(env)), shadow.step(zero_actions(shadow))
    for got, want in zip(out, ref):
        assert list(got) == list(want)
        for agent in got:
            if isinstance(got[agent], dict):  # infos
                assert got[agent] == want[agent]
            else:
                assert np.asarray(got[agent]).tobytes() == np.asarray(want[agent]).tobytes()
    assert env.sim.digest() == shadow.sim.digest()


def started(make):
    env, shadow = make(), make()
    env.reset(seed=3)
    shadow.reset(seed=3)
    env.step(zero_actions(env))
    shadow.step(zero_actions(shadow))
    return env, shadow


# -- dict actions -------------------------------------------------------------------------------
DISCRETE_BAD = [  # (id, agent -> bad value, message)
    ("fraction", 1.5, r"actions\['cell_0'\] must be an integer, got .*1\.5"),
    ("nan", float("nan"), r"actions\['cell_0'\] must be an integer, got .*nan"),
    ("inf", np.float32(np.inf), r"actions\['cell_0'\] must be an integer, got .*inf"),
    ("negative", -1, r"actions\['cell_0'\] must be in \[0, 11\), got -1"),
    ("too-big", 11, r"actions\['cell_0'\] must be in \[0, 11\), got 11"),
    ("huge-int", 2**70, r"actions\['cell_0'\] must be in \[0, 11\), got 1180591620717411303424$"),
    ("string", "a", r"actions\['cell_0'\] must be numeric, got 'a'"),
    ("none", None, r"actions\['cell_0'\] must be numeric, got None"),
    ("complex", 1 + 1j, r"actions\['cell_0'\] must be numeric, got \(1\+1j\)"),
    ("list", [1, 2], r"actions\['cell_0'\] must be an integer scalar, got \[1, 2\]"),
    ("array-2d", np.array([[1]]), r"actions\['cell_0'\] must be an integer scalar"),
    ("empty-array", np.array([]), r"actions\['cell_0'\] must be an integer scalar"),
]
BOX_BAD = [
    ("short", np.zeros(3), r"actions\['uav_0'\] must be an array of shape \(4,\), got"),
    ("long", np.zeros(5), r"actions\['uav_0'\] must be an array of shape \(4,\)"),
    ("scalar", 0.0, r"actions\['uav_0'\] must be an array of shape \(4,\), got 0\.0"),
    ("2d", np.zeros((2, 2)), r"actions\['uav_0'\] must be an array of shape \(4,\)"),
    ("ragged", [0.0, [1.0], 0.0, 0.0], r"actions\['uav_0'\] must be an array of shape"),
    ("nan", np.full(4, np.nan), r"actions\['uav_0'\] must not be NaN, got \[nan"),
    ("one-nan", np.array([0, np.nan, 0, 0]), r"actions\['uav_0'\] must not be NaN"),
    ("strings", np.array(["a"] * 4), r"actions\['uav_0'\] must be numeric, got \['a'"),
    ("complex", np.zeros(4, complex), r"actions\['uav_0'\] must be numeric, got \[0j"),
    ("objects", [None] * 4, r"actions\['uav_0'\] must be numeric, got \[None"),
]
DICT_BAD = [  # (id, actions dict from the valid one, message) for any env
    ("unknown", lambda a: {**a, "nobody_9": 0}, r"actions: unknown agents \['nobody_9'\]"),
    ("int-key", lambda a: {**a, 3: 0}, r"actions: unknown agents \[3\]"),
    ("list", lambda a: list(a.values()), r"actions must be a dict keyed by agent, got list"),
    ("none", lambda a: None, r"actions must be a dict keyed by agent, got NoneType"),
    ("array", lambda a: np.zeros(4), r"actions must be a dict keyed by agent, got ndarray"),
]


def bad_dict_cases():
    for name in ("pcs", "pcs-parallel"):
        for case, value, match in DISCRETE_BAD:
            yield pytest.param(name, case, value, match, id=f"{name}-{case}")
    for case, value, match in BOX_BAD:
        yield pytest.param("aircraft", case, value, match, id=f"aircraft-{case}")


@pytest.mark.parametrize("env_name,case,value,match", list(bad_dict_cases()))
def test_bad_action_values(env_name, case, value, match):
    env, shadow = started(ENVS[env_name])
    actions = zero_actions(env)
    actions[env.agents[0]] = value
    with pytest.raises(ValueError, match=match):
        env.step(actions)
    assert_same_step(env, shadow)


MISSING = [  # Discrete actions have no default: a live cell without an action is an error
    ("missing", lambda a: {k: v for k, v in list(a.items())[1:]}, r"no action for live agents"),
    ("empty", lambda a: {}, r"no action for live agents"),
]


@pytest.mark.parametrize("case,make_bad,match", MISSING, ids=[c[0] for c in MISSING])
def test_discrete_agent_without_action_is_an_error(case, make_bad, match):
    env, shadow = started(ENVS["pcs"])
    with pytest.raises(ValueError, match=match):
        env.step(make_bad(zero_actions(env)))
    assert_same_step(env, shadow)


def test_box_agent_without_action_hovers():
    """aircraft: a live UAV missing from the dict acts as if given the zero action (hover)."""
    env, shadow = started(ENVS["aircraft"])
    actions = zero_actions(env)
    del actions[env.agents[0]]
    out, ref = env.step(actions), shadow.step(zero_actions(shadow))
    assert env.sim.digest() == shadow.sim.digest()
    assert list(out[1].items()) == list(ref[1].items())
    out, ref = env.step({}), shadow.step(zero_actions(shadow))  # nobody acts: all hover
    assert env.sim.digest() == shadow.sim.digest()


OUT_OF_RANGE = [  # (id, action of uav_0, what the env must act on)
    ("above", np.full(4, 1.5), np.ones(4)),
    ("below", np.full(4, -2.0), -np.ones(4)),
    ("inf", np.array([0, 0, np.inf, -np.inf]), np.array([0, 0, 1, -1])),
    ("mixed", np.array([0.25, 7.0, -0.5, -1e30]), np.array([0.25, 1.0, -0.5, -1.0])),
]


@pytest.mark.parametrize("case,value,clipped", OUT_OF_RANGE, ids=[c[0] for c in OUT_OF_RANGE])
@pytest.mark.parametrize("path", ["dict", "arrays"])
def test_box_actions_are_clipped_like_clip_action(case, value, clipped, path):
    """Out-of-range (and infinite) Box actions act exactly as the clipped action."""
    env, shadow = started(ENVS["aircraft"])
    if path == "dict":
        actions, expected = zero_actions(env), zero_actions(shadow)
        actions[env.agents[0]] = value
        expected[shadow.agents[0]] = clipped.astype(np.float32)
        out, ref = env.step(actions), shadow.step(expected)
        assert list(out[1].items()) == list(ref[1].items())
    else:
        actions = np.zeros((len(env.possible_agents), 4))
        expected = np.zeros((len(env.possible_agents), 4), np.float32)
        actions[0], expected[0] = value, clipped
        out, ref = env.step_arrays(actions), shadow.step_arrays(expected)
        assert out[0].tobytes() == ref[0].tobytes() and out[1].tobytes() == ref[1].tobytes()
    assert env.sim.digest() == shadow.sim.digest()


@pytest.mark.parametrize("env_name", ["pcs", "aircraft"])
@pytest.mark.parametrize("case,make_bad,match", DICT_BAD, ids=[c[0] for c in DICT_BAD])
def test_bad_action_dicts(env_name, case, make_bad, match):
    env, shadow = started(ENVS[env_name])
    with pytest.raises(ValueError, match=match):
        env.step(make_bad(zero_actions(env)))
    assert_same_step(env, shadow)


def test_action_for_dead_agent():
    # A battery this small runs out in the first step: every UAV crashes.
    env = small_aircraft(num_uavs=3, battery_capacity=1e-6)
    env.reset(seed=1)
    env.step(zero_actions(env))
    assert env.agents == []  # all crashed
    with pytest.raises(RuntimeError, match=r"no live agents \(episode over\); call reset\(\)"):
        env.step({"uav_0": np.zeros(4, np.float32)})
    # Partly dead: uav_0 crashed (env.agents must name exactly the live agents).
    # Its actions are ignored, unchecked (PettingZoo's envs, SuperSuit's black_death).
    env2, shadow2 = started(small_aircraft)
    crash_first_uav(env2, shadow2)
    assert env2.agents == shadow2.agents == ["uav_1", "uav_2", "uav_3"]
    given = {a: np.zeros(4, np.float32) for a in env2.possible_agents}
    given["uav_0"] = np.full(4, np.nan)
    env2.step(given)
    shadow2.step({a: np.zeros(4, np.float32) for a in shadow2.agents})
    assert env2.sim.digest() == shadow2.sim.digest()


# -- the array fast path ------------------------------------------------------------------------
ARRAY_BAD = [  # (env, id, actions, message)
    ("pcs", "short", np.zeros(3, np.int64), r"actions must have shape \(4,\), got \(3,\)"),
    ("pcs", "2d", np.zeros((4, 1), np.int64), r"actions must have shape \(4,\), got \(4, 1\)"),
    ("pcs", "none", None, r"actions must have shape \(4,\), got \(\)"),
    ("pcs", "nan", np.full(4, np.nan), r"actions\['cell_0'\] must be an integer, got .*nan"),
    ("pcs", "fraction", np.full(4, 0.5), r"actions\['cell_0'\] must be an integer, got .*0\.5"),
    ("pcs", "negative", np.full(4, -1), r"actions\['cell_0'\] must be in \[0, 11\), got -1"),
    ("pcs", "huge", np.full(4, 2**40), r"actions\['cell_0'\] must be in \[0, 11\)"),
    ("pcs", "strings", np.array(["a"] * 4), r"actions\['cell_0'\] must be numeric, got 'a'"),
    ("pcs", "complex", np.zeros(4, complex), r"actions\['cell_0'\] must be numeric"),
    ("aircraft", "short", np.zeros((4, 3)), r"actions must have shape \(4, 4\), got \(4, 3\)"),
    ("aircraft", "flat", np.zeros(16), r"actions must have shape \(4, 4\), got \(16,\)"),
    ("aircraft", "nan", np.full((4, 4), np.nan), r"actions\['uav_0'\] must not be NaN"),
    ("aircraft", "objects", np.full((4, 4), None), r"actions\['uav_0'\] must be numeric"),
]


@pytest.mark.parametrize(
    "env_name,actions,match",
    [pytest.param(e, a, m, id=f"{e}-{c}") for e, c, a, m in ARRAY_BAD],
)
def test_bad_step_arrays(env_name, actions, match):
    env, shadow = started(ENVS[env_name])
    with pytest.raises(ValueError, match=match):
        env.step_arrays(actions)
    assert_same_step(env, shadow)


def test_step_arrays_ignores_rows_of_dead_agents():
    env, shadow = started(small_aircraft)
    crash_first_uav(env, shadow)
    actions = np.zeros((4, 4), np.float32)
    actions[0] = np.nan  # uav_0 is not live: its row is ignored
    env.step_arrays(actions)
    shadow.step_arrays(np.zeros((4, 4), np.float32))
    assert env.sim.digest() == shadow.sim.digest()


# -- call order ---------------------------------------------------------------------------------
@pytest.mark.parametrize("env_name", ["pcs", "aircraft"])
def test_calls_before_reset(env_name):
    env = ENVS[env_name]()
    actions = {a: env.action_space(a).sample() for a in env.possible_agents}
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        env.step(actions)
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        env.step_arrays(np.zeros((len(env.possible_agents), 4), np.float32))
    with pytest.raises(RuntimeError, match=r"state\(\) called before reset\(\)"):
        env.state()
    env.reset(seed=0)
    env.step({a: actions[a] for a in env.agents})


def test_step_after_episode_end():
    env = small_pcs(max_cycles=2)
    env.reset(seed=0)
    for _ in range(2):
        env.step(zero_actions(env))
    assert env.agents == []
    with pytest.raises(RuntimeError, match=r"no live agents \(episode over\); call reset\(\)"):
        env.step({})
    with pytest.raises(RuntimeError, match=r"no live agents"):
        env.step_arrays(np.zeros(4, np.int64))
    env.reset(seed=0)
    env.step(zero_actions(env))


def test_vector_step_before_reset():
    venv = vector.make(
        "pcs_v0", num_envs=2, width=2, height=2, phones_per_cell=2, executor="serial"
    )
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        venv.step(np.zeros(8, np.int64))


# -- seeds --------------------------------------------------------------------------------------
BAD_SEEDS = [-1, 2**64, 2**100, 1.5, np.float64(2.0), "7", [1], True, None.__class__]
GOOD_SEEDS = [0, 2**64 - 1, np.int64(5), np.uint64(2**63), np.int8(3), np.uint32(7)]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_reset_seeds(seed):
    env, shadow = started(small_pcs)
    with pytest.raises(ValueError, match=r"seed must be None or an integer in \[0, 2\*\*64\), got"):
        env.reset(seed=seed)
    assert_same_step(env, shadow)  # the rejected reset changed nothing


@pytest.mark.parametrize("seed", GOOD_SEEDS, ids=repr)
def test_good_reset_seeds_match_python_ints(seed):
    env, shadow = small_pcs(), small_pcs()
    obs, _ = env.reset(seed=seed)
    ref, _ = shadow.reset(seed=int(seed))
    assert all(obs[a].tobytes() == ref[a].tobytes() for a in obs)
    assert_same_step(env, shadow)


@pytest.mark.parametrize("seed", [-1, 2**64, "x", 1.5])
def test_bad_constructor_and_vector_seeds(seed):
    with pytest.raises(ValueError, match="seed must be None or an integer"):
        small_pcs(seed=seed)
    venv = vector.make(
        "pcs_v0", num_envs=2, width=2, height=2, phones_per_cell=2, executor="serial", seed=0
    )
    venv.reset(seed=1)
    with pytest.raises(ValueError, match="seed must be"):
        venv.reset(seed=seed)
    with pytest.raises(ValueError, match="seed must be"):
        venv.reset(seed=[0, seed])
    venv.step(np.zeros(8, np.int64))


def test_reset_options_must_be_a_dict():
    env, shadow = started(small_pcs)
    with pytest.raises(ValueError, match=r"options must be None or a dict, got \[1\]"):
        env.reset(seed=1, options=[1])
    assert_same_step(env, shadow)


# -- config -------------------------------------------------------------------------------------
PCS_CONFIG_BAD = [  # (kwargs, message)
    (dict(width=0), r"width must be in \[1, 4096\], got 0"),
    (dict(height=-3), r"height must be in \[1, 4096\], got -3"),
    (dict(width=1.5), r"width must be an integer, got 1.5"),
    (dict(width="3"), r"width must be an integer, got '3'"),
    (dict(width=None), r"width must be an integer, got None"),
    (dict(channels=0), r"channels must be in \[1, 64\], got 0"),
    (dict(phones_per_cell=0), r"phones_per_cell must be in \[1, 65536\], got 0"),
    (dict(handoff_delay=0), r"handoff_delay must be a finite number in \(0.0, inf\], got 0.0"),
    (dict(handoff_delay=-1), r"handoff_delay must be a finite number in \(0.0, inf\], got -1.0"),
    (dict(handoff_delay=float("nan")), r"handoff_delay must be a finite number .* got nan"),
    (dict(handoff_delay=float("inf")), r"handoff_delay must be a finite number .* got inf"),
    (dict(step_minutes=0), r"step_minutes must be a finite number in \(0.0, inf\], got 0.0"),
    (dict(step_minutes=1e300), r"step_minutes must be a finite number in \(0, 1000000000000\]"),
    (dict(call_interval=-1.0), r"call_interval must be a finite number"),
    (dict(handoff_weight="x"), r"handoff_weight must be a number, got 'x'"),
    (dict(width=4096, height=4096, phones_per_cell=6), r"phones_per_cell \* width \* height"),
    (dict(max_cycles=0), r"max_cycles must be >= 1, got 0"),
    (dict(max_cycles=2.0), r"max_cycles must be an integer, got 2.0"),
    (
        dict(num_threads=0),
        r'num_threads must be "auto" or in \[1, \d+\] \(8 per usable CPU, at least 64\), got 0',
    ),
    (
        dict(num_threads=-1),
        r'num_threads must be "auto" or in \[1, \d+\] \(8 per usable CPU, at least 64\), got -1',
    ),
    (
        dict(num_threads=10**6),
        r'num_threads must be "auto" or in \[1, \d+\] \(8 per usable CPU, at least 64\), '
        r"got 1000000",
    ),
    (dict(num_threads="many"), r"num_threads must be \"auto\" or an integer, got 'many'"),
    (dict(num_threads=True), r'num_threads must be "auto" or an integer, got True'),
    (dict(executor="gpu"), r"executor must be None or one of .*, got 'gpu'"),
    (dict(executor=3), r"executor must be None or one of .*, got 3"),
    (dict(event_budget=-1), r"event_budget must be >= 0, got -1"),
    (dict(check="yes"), r"check must be a bool, got 'yes'"),
    (dict(render_mode="rgb"), r"render_mode must be None or one of .*, got 'rgb'"),
]
AIRCRAFT_CONFIG_BAD = [
    (dict(num_uavs=0), r"num_uavs must be in \[1, 1048576\], got 0"),
    (dict(num_uavs=-5), r"num_uavs must be in \[1, 1048576\], got -5"),
    (dict(substeps=0), r"substeps must be in \[1, 10000\], got 0"),
    (dict(comm_latency=0), r"comm_latency must be a finite number in \(0.0, 1000.0\], got 0.0"),
    (dict(dt=-0.1), r"dt must be a finite number in \(0.0, 1000.0\], got -0.1"),
    (dict(max_neighbors=0), r"max_neighbors must be in \[1, 32\], got 0"),
    (dict(k_neighbors=8, max_neighbors=4), r"k_neighbors must be <= max_neighbors \(4\), got 8"),
    (dict(arena_size=0.0), r"arena_size must be a finite number in \(0.0, 10000000.0\]"),
    (dict(safe_radius=float("nan")), r"safe_radius must be a finite number .* got nan"),
]


@pytest.mark.parametrize("kwargs,match", PCS_CONFIG_BAD, ids=lambda x: str(x)[:40])
def test_bad_pcs_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        small_pcs(**kwargs) if "width" not in kwargs else pcs_v0.parallel_env(**kwargs)


@pytest.mark.parametrize("kwargs,match", AIRCRAFT_CONFIG_BAD, ids=lambda x: str(x)[:40])
def test_bad_aircraft_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        small_aircraft(**kwargs)


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        small_pcs(bogus=1)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(num_envs=0), r"num_envs must be in \[1, 65536\], got 0"),
        (dict(num_envs=-1), r"num_envs must be in \[1, 65536\], got -1"),
        (dict(num_envs=1.5), r"num_envs must be an integer, got 1.5"),
        (dict(num_envs=10**6), r"num_envs must be in \[1, 65536\], got 1000000"),
        (dict(num_envs=2, width=0), r"width must be in \[1, 4096\], got 0"),
    ],
)
def test_bad_vector_config(kwargs, match):
    cfg = dict(width=2, height=2, executor="serial")
    cfg.update(kwargs)
    with pytest.raises(ValueError, match=match):
        vector.make("pcs_v0", **cfg)


# -- absurd sizes: refused up front with the estimate ----------------------------------------------
def test_absurd_size_refused_with_estimate(monkeypatch):
    monkeypatch.setenv("SEER_MEMORY_LIMIT", str(200 * 10**6))  # pretend 200 MB are free
    with pytest.raises(
        ValueError,
        match=r"pcs with width=1024, height=1024, phones_per_cell=64 needs about \d+\.\d GB "
        r"of memory \(1048576 entities x 280 B \+ 67108864 pending events x 152 B .*\) "
        r"but only 200\.0 MB is available",
    ):
        pcs_v0.parallel_env(width=1024, height=1024, phones_per_cell=64, executor="serial")
    with pytest.raises(ValueError, match=r"aircraft with num_uavs=1048576, max_neighbors=16"):
        aircraft_v0.parallel_env(num_uavs=1 << 20, executor="serial")
    with pytest.raises(ValueError, match=r"phold with num_entities=16777216, population=5"):
        seer_env.Simulation("phold", {"num_entities": 1 << 24, "population": 5})
    # A batch of instances that fit one by one but not together.
    with pytest.raises(ValueError, match=r"pcs with this config x num_envs=4096 needs about"):
        vector.make("pcs_v0", num_envs=4096, width=32, height=32, executor="serial")
    small_pcs().reset(seed=0)  # small envs still build


def test_memory_estimate_allows_the_defaults():
    env = pcs_v0.parallel_env(executor="serial")  # the memory check runs here
    obs, _ = env.reset(seed=0)
    assert list(obs) == env.possible_agents


# -- the low-level Simulation ---------------------------------------------------------------------
SIM_BAD = [  # (kwargs for Simulation(...), error type, message)
    (dict(model="nope"), ValueError, r"model must be one of .*; got 'nope'"),
    (
        dict(model="phold", num_threads=0),
        ValueError,
        r"num_threads must be in \[1, \d+\] \(8 per usable CPU, at least 64\), got 0",
    ),
    (
        dict(model="phold", num_threads=-1),
        ValueError,
        r"num_threads must be in \[1, \d+\] \(8 per usable CPU, at least 64\), got -1",
    ),
    (dict(model="phold", num_threads=2.5), ValueError, r"num_threads must be an integer, got 2.5"),
    (dict(model="phold", event_budget=-1), ValueError, r"event_budget must be in \[0, .*got -1"),
    (dict(model="phold", executor="gpu"), ValueError, r"executor must be one of .*; got 'gpu'"),
    (
        dict(model="phold", config={"num_entities": "3"}),
        ValueError,
        r"num_entities must be a number, got '3'",
    ),
    (
        dict(model="phold", config={"num_entities": float("nan")}),
        ValueError,
        r"num_entities must be an integer in \[1, 16777216\], got nan",
    ),
    (
        dict(model="phold", config={"lookahead": 0}),
        ValueError,
        r"lookahead must be a finite number in \(0, .*got 0",
    ),
    (dict(model="phold", config={"lookahead": -1.0}), ValueError, r"lookahead must be"),
    (dict(model="phold", config={"typo": 1}), ValueError, r"unknown config key 'typo'"),
    (dict(model="faulty", config={"num_entities": 0}), ValueError, r"num_entities must be"),
]


@pytest.mark.parametrize("kwargs,error,match", SIM_BAD, ids=lambda x: str(x)[:50])
def test_bad_simulation_arguments(kwargs, error, match):
    kwargs = dict(kwargs)
    model, config = kwargs.pop("model"), kwargs.pop("config", {})
    with pytest.raises(error, match=match):
        seer_env.Simulation(model, config, **kwargs)


def test_bad_simulation_calls():
    sim = seer_env.Simulation("phold", {"num_entities": 8})
    with pytest.raises(RuntimeError, match=r"run_until\(\) called before reset\(\)"):
        sim.run_until(1.0)
    with pytest.raises(RuntimeError, match=r"save\(\) called before reset\(\)"):
        sim.save()
    with pytest.raises(ValueError, match="saved state is truncated"):
        sim.load(b"xx")
    with pytest.raises(ValueError, match="not a seer_env save"):
        sim.load(b"x" * 64)
    sim.reset(0)
    with pytest.raises(ValueError, match="t must be finite, got nan"):
        sim.run_until(float("nan"))
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64\), got -1"):
        sim.reset(-1)
    with pytest.raises(
        ValueError,
        match=r"num_threads must be in \[1, \d+\] \(8 per usable CPU, at least 64\), got -2",
    ):
        sim.set_executor("parallel", -2)
    with pytest.raises(ValueError, match=r"actions must be an integer array, got dtype object"):
        sim.step(None)
    other = seer_env.Simulation("phold", {"num_entities": 9})
    other.reset(0)
    with pytest.raises(ValueError, match="different model or configuration"):
        sim.load(other.save())
    sim.run_until(2.0)
    assert sim.events_processed > 0


# -- the vector env ------------------------------------------------------------------------------
VECTOR_BAD = [  # (id, actions for 2 instances x 4 agents, message)
    ("short", np.zeros(7, np.int64), r"actions must have shape \(8,\), got \(7,\)"),
    ("none", None, r"actions must have shape \(8,\), got \(\)"),
    ("negative", np.full(8, -1), r"actions\[0\] is outside the action space"),
    ("too-big", np.full(8, 11), r"actions\[0\] is outside the action space"),
    ("nan", np.full(8, np.nan), r"actions\[0\] is outside the action space: np.float64\(nan\)"),
    ("fraction", np.full(8, 0.5), r"actions\[0\] is outside the action space"),
    ("strings", np.array(["a"] * 8), r"actions must be an integer or real array, got dtype"),
    ("objects", np.array([None] * 8), r"actions must be an integer or real array"),
]


@pytest.mark.parametrize("actions,match", [pytest.param(a, m, id=i) for i, a, m in VECTOR_BAD])
def test_bad_vector_actions(actions, match):
    def make():
        venv = vector.make(
            "pcs_v0", num_envs=2, width=2, height=2, phones_per_cell=2, executor="serial"
        )
        venv.reset(seed=5)
        return venv

    venv, shadow = make(), make()
    with pytest.raises(ValueError, match=match):
        venv.step(actions)
    assert not venv.sim.failed_instances
    for v in (venv, shadow):
        v.step(np.ones(8, np.int64))
    for i in range(2):
        assert venv.sim.digest(i) == shadow.sim.digest(i)


def test_bad_vector_box_actions():
    venv = vector.make("aircraft_v0", num_envs=2, num_uavs=3, substeps=2, executor="serial")
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions\[2\] is outside the action space"):
        bad = np.zeros((6, 4), np.float32)
        bad[2, 1] = np.nan
        venv.step(bad)
    with pytest.raises(ValueError, match=r"actions must be an integer or real array"):
        venv.step(np.zeros((6, 4), complex))
    with pytest.raises(ValueError, match=r"reset_mask'\] must have shape \(2,\) or \(6,\)"):
        venv.reset(options={"reset_mask": [True]})
    venv.step(np.zeros((6, 4), np.float32))


def test_vector_box_actions_are_clipped():
    """Out-of-range and infinite Box actions act exactly as the clipped ones (ClipAction)."""
    config = dict(num_envs=2, num_uavs=3, substeps=2, executor="serial")
    venv, shadow = vector.make("aircraft_v0", **config), vector.make("aircraft_v0", **config)
    venv.reset(seed=0)
    shadow.reset(seed=0)
    wild = np.tile(np.array([3.0, -np.inf, 0.5, 1e9], np.float32), (6, 1))
    tame = np.tile(np.array([1.0, -1.0, 0.5, 1.0], np.float32), (6, 1))
    for _ in range(3):
        got, want = venv.step(wild), shadow.step(tame)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    assert venv.sim.digest(0) == shadow.sim.digest(0)


def test_concurrent_calls_refused():
    env = small_pcs(step_minutes=1e10, event_budget=0)
    env.reset(seed=0)
    errors = []

    def other():
        try:
            env.sim.reset(1)
        except RuntimeError as exc:
            errors.append(exc)

    started_step = threading.Event()

    def long_step():
        started_step.set()
        try:
            env.step(zero_actions(env))
        except KeyboardInterrupt:
            pass

    t = threading.Thread(target=long_step)
    t.start()
    started_step.wait()
    deadline = time.monotonic() + 5
    while not errors and time.monotonic() < deadline:
        other()
        time.sleep(0.01)
    env.sim.request_interrupt()
    t.join()
    assert errors and "another call on this env is in progress" in str(errors[0])
    env.reset(seed=0)
