"""Ray RLlib: SeerRLlibEnv fixes ParallelPettingZooEnv's quirks; PPO trains on every env."""

import math
import os
import pickle

import cloudpickle
import numpy as np
import pytest
from envcases import ENV_NAMES, SMALL, cycles, make, sample_actions
from gymnasium import spaces
from pettingzoo import ParallelEnv

pytest.importorskip("ray.rllib")
import ray  # noqa: E402
from ray.tune.registry import ENV_CREATOR, _global_registry  # noqa: E402

import seer_env  # noqa: E402
from seer_env.integrations import rllib as seer_rllib  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")


# -- the wrapper, without a Ray cluster ------------------------------------------------------------
@pytest.mark.parametrize("name", ENV_NAMES)
def test_wrapper_keeps_agent_order_and_spaces(name):
    env = make(name, seed=0)
    wrapped = seer_rllib.SeerRLlibEnv(env)
    # the stock wrapper resets without a seed in its constructor: our env is ready
    assert env.agents == env.possible_agents
    assert wrapped.possible_agents == env.possible_agents  # not reordered through a set
    assert wrapped.agents == env.possible_agents
    for agent in env.possible_agents:
        assert wrapped.get_observation_space(agent) is env.observation_space(agent)
        assert wrapped.get_action_space(agent) is env.action_space(agent)
    obs, infos = wrapped.reset(seed=1)
    assert list(obs) == env.possible_agents and list(infos) == env.possible_agents


@pytest.mark.parametrize("name", ENV_NAMES)
def test_wrapper_episode_ends_exactly_when_no_agent_is_left(name):
    env = make(name, max_cycles=cycles(name, 7))
    wrapped = seer_rllib.SeerRLlibEnv(env)
    wrapped.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    while True:
        obs, rew, term, trunc, infos = wrapped.step(sample_actions(env, rng))
        steps += 1
        assert wrapped.agents == env.agents  # follows the env
        assert "__all__" not in obs and "__all__" not in rew
        if term["__all__"] or trunc["__all__"]:
            break
        assert env.agents
    assert env.agents == [] and steps <= cycles(name, 7)


class _MixedEnding(ParallelEnv):
    """Two agents; on the last step one terminates and the other is truncated."""

    metadata = {"name": "mixed_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self):
        self.possible_agents = ["a_0", "a_1"]
        self.agents = []
        self.render_mode = None
        space = spaces.Box(0, 1, (1,), np.float32)
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(2) for a in self.possible_agents}
        self.t = 0

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.t = 0
        return {a: np.zeros(1, np.float32) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        self.t += 1
        live = self.agents
        end = self.t == 2
        obs = {a: np.zeros(1, np.float32) for a in live}
        term = {a: end and a == "a_0" for a in live}
        trunc = {a: end and a == "a_1" for a in live}
        self.agents = [] if end else list(live)
        return obs, {a: 0.0 for a in live}, term, trunc, {a: {} for a in live}


def test_mixed_termination_and_truncation_ends_the_episode():
    wrapped = seer_rllib.SeerRLlibEnv(_MixedEnding())
    wrapped.reset()
    _, _, term, trunc, _ = wrapped.step({"a_0": 0, "a_1": 0})
    assert not term["__all__"] and not trunc["__all__"]
    _, _, term, trunc, _ = wrapped.step({"a_0": 0, "a_1": 0})
    assert trunc["__all__"] and not term["__all__"]  # the stock wrapper sets neither


def test_wrapper_render_uses_the_envs_mode():
    name = "pcs_v0" if "pcs_v0" in ENV_NAMES else ENV_NAMES[0]
    env = make(name, render_mode="ansi")
    wrapped = seer_rllib.SeerRLlibEnv(env)
    assert isinstance(wrapped.render(), str)
    assert seer_rllib.SeerRLlibEnv(make(name)).render() is None


# -- the env creator ---------------------------------------------------------------------------
def test_threads_outside_ray_is_one():
    assert seer_rllib.env_runner_threads() == 1


def test_creator_pickles_and_builds_by_config():
    creator = seer_rllib.env_creator(ENV_NAMES[0])
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
        creator = loads(dumps(creator))
    env = creator({**SMALL.get(ENV_NAMES[0], {}), "max_cycles": 5})
    assert isinstance(env, seer_rllib.SeerRLlibEnv)
    assert env.par_env.runtime.num_threads == 1 and env.par_env.runtime.executor == "serial"
    env = creator({**SMALL.get(ENV_NAMES[0], {}), "num_threads": 2, "executor": "parallel"})
    assert env.par_env.runtime.num_threads == 2
    with pytest.raises(ValueError, match="name must be one of"):
        seer_rllib.env_creator("nope_v0")


def test_creator_gives_each_runner_and_env_its_own_seed():
    from ray.rllib.env.env_context import EnvContext

    name = ENV_NAMES[0]
    creator = seer_rllib.env_creator(name)
    cfg = {**SMALL.get(name, {}), "seed": 5}
    first_obs = []
    for worker in (1, 1, 2):
        env = creator(EnvContext(cfg, worker_index=worker))
        seed = env.par_env._seed
        first_obs.append((worker, seed))
    seeds = [s for _, s in first_obs]
    assert len(set(seeds)) == 3  # two envs in runner 1, one in runner 2: all distinct
    assert seed == seer_rllib._derived_seed(5, 2, 0)  # reproducible
    # without a seed: fresh entropy per env, as the env itself does
    assert creator(EnvContext(dict(SMALL.get(name, {})), worker_index=1)).par_env._seed is None


def test_register_registers_every_env():
    names = seer_rllib.register()
    assert names == seer_env.env_names()  # the event-driven ones too: RLlib's own semantics
    for name in names:
        assert _global_registry.contains(ENV_CREATOR, name)
    assert seer_rllib.register(prefix="seer/") == [f"seer/{n}" for n in seer_env.env_names()]


def test_check_resources_needs_ray_initialized():
    if ray.is_initialized():
        pytest.skip("a Ray cluster of another test is up")
    with pytest.raises(RuntimeError, match=r"before ray.init\(\)"):
        seer_rllib.check_resources(ppo_config("pcs_v0"))


# -- on a Ray cluster --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_cluster():
    ray.init(
        num_cpus=4,  # logical: lets two 1-CPU env runners and a 2-CPU probe actor fit
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        ignore_reinit_error=True,
    )
    yield
    ray.shutdown()


@ray.remote
def _threads_in_a_task():
    return seer_rllib.env_runner_threads()


def test_threads_follow_the_cpus_ray_assigned(ray_cluster):
    usable = len(os.sched_getaffinity(0))
    assert ray.get(_threads_in_a_task.options(num_cpus=1).remote()) == 1
    assert ray.get(_threads_in_a_task.options(num_cpus=2).remote()) == min(2, usable)


def ppo_config(name, batch=128, cpus_per_runner=1):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    return (
        PPOConfig()
        .environment(
            name, env_config={**SMALL.get(name, {}), "max_cycles": cycles(name, 8), "seed": 0}
        )
        .framework("torch")
        .env_runners(
            num_env_runners=2,
            num_cpus_per_env_runner=cpus_per_runner,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=batch // 2,
            num_epochs=1,
        )
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
        .multi_agent(
            policies={"shared"},
            policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared",
        )
        .debugging(seed=0, log_level="ERROR")
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ENV_NAMES)
def test_ppo_trains_with_two_env_runners(ray_cluster, name):
    seer_rllib.register()
    # pcs_v0: runners reserve 2 (logical) CPUs each, so STPA may give each env 2 threads
    cpus = 2 if name == "pcs_v0" else 1
    algo = ppo_config(name, cpus_per_runner=cpus).build_algo()
    try:
        results = [algo.train() for _ in range(2)]
        runtimes = algo.env_runner_group.foreach_env_runner(
            lambda runner: runner.env.envs[0].unwrapped.par_env.runtime,
            local_env_runner=False,
        )
    finally:
        algo.stop()
    expected = min(cpus, len(os.sched_getaffinity(0)))
    for runtime in runtimes:  # STPA chose each pool within its runner's CPU grant
        assert runtime.stpa is not None
        assert runtime.stpa["features"]["usable_threads"] <= expected
        assert 1 <= runtime.num_threads <= expected
        # On 1-2 usable threads STPA also measures parallel x1 (it can win by
        # per-entity heaps' locality, and does under load); serial is always x1.
        assert runtime.executor in ("serial", "parallel")
        assert runtime.executor == "parallel" or runtime.num_threads == 1
    sampled = [r["env_runners"]["num_env_steps_sampled_lifetime"] for r in results]
    assert sampled[0] > 0 and sampled[1] > sampled[0]
    assert math.isfinite(results[-1]["env_runners"]["episode_return_mean"])
    assert results[-1]["env_runners"]["num_episodes_lifetime"] >= 2


def test_wrapper_agents_follow_agents_that_leave():
    from envcases import DyingEnv

    wrapped = seer_rllib.SeerRLlibEnv(DyingEnv(n=3, max_cycles=5))
    wrapped.reset()
    seen = []
    while True:
        _, _, term, trunc, _ = wrapped.step({a: 0 for a in wrapped.agents})
        seen.append(list(wrapped.agents))
        if term["__all__"] or trunc["__all__"]:
            break
    assert seen == [["bot_1", "bot_2"], ["bot_2"], ["bot_2"], ["bot_2"], []]
    assert trunc["__all__"] and not term["__all__"]


def test_check_resources_refuses_a_request_the_cluster_cannot_grant(ray_cluster):
    # The cluster has 4 logical CPUs: 2 runners x 2 fit, 2 x 3 would queue forever.
    assert seer_rllib.check_resources(ppo_config("pcs_v0", cpus_per_runner=2)) == 4
    too_big = ppo_config("pcs_v0", cpus_per_runner=3)
    with pytest.raises(ValueError, match=r"asks Ray for 6 CPUs .* cluster has 4"):
        seer_rllib.check_resources(too_big)
    learners = ppo_config("pcs_v0").learners(num_learners=3)  # "auto": 1 CPU each
    assert seer_rllib.requested_cpus(learners) == 5
    with pytest.raises(ValueError, match="num_learners=3"):
        seer_rllib.check_resources(learners)


def test_an_env_whose_agents_act_when_they_ask_steps_as_an_rllib_multi_agent_env():
    """RLlib's contract: observations for the agents to act next, ``__all__`` at the end."""
    creator = seer_rllib.env_creator("pcs_admission_v0")
    env = creator({"width": 4, "height": 4, "max_cycles": 2, "num_threads": 1})
    obs, _ = env.reset(seed=0)
    assert obs and set(obs) == set(env.par_env.agents) != set(env.possible_agents)
    rounds = 0
    while True:
        obs, rewards, terminateds, truncateds, _ = env.step(dict.fromkeys(obs, 1))
        rounds += 1
        assert set(rewards) == set(obs)
        if truncateds["__all__"]:
            break
        assert not terminateds["__all__"] and set(obs) == set(env.par_env.agents)
    assert set(obs) == set(env.possible_agents) and rounds > 2

