"""The event-driven env's contract: who acts, what is returned, and every refusal."""

import numpy as np
import pytest
from decision_models import Tally
from interrupt_points import walk_points

import seer_env
from seer_env import _core
from seer_env.aec import aec_env
from seer_env.decision_env import EventDrivenDecisions


def admission(**options):
    options.setdefault("max_cycles", 3)
    return seer_env.SeerDecisionEnv("pcs_admission", {"width": 4, "height": 4}, **options)


def run(env, seed=0, action=1):
    obs, infos = env.reset(seed=seed)
    returns = [(sorted(obs), infos)]
    total = 0.0
    while env.agents:
        obs, rewards, terms, truncs, infos = env.step(dict.fromkeys(env.agents, action))
        total += sum(rewards.values())
        returns.append((sorted(obs), infos))
    return returns, total


def test_observations_come_for_exactly_the_agents_that_must_act():
    env = admission()
    obs, infos = env.reset(seed=1)
    assert sorted(obs) == sorted(env.agents) == sorted(infos)
    times = [infos[a]["decision_time"] for a in env.agents]
    assert times == sorted(times)  # (time, agent) order
    assert env.needs_action.sum() == len(env.agents)
    assert env.observation_space(env.agents[0]).contains(obs[env.agents[0]])


def test_the_episode_ends_with_every_agent_truncated_and_no_agent_left():
    env = admission(max_cycles=2)
    env.reset(seed=0)
    while env.agents:
        last = env.step(dict.fromkeys(env.agents, 1))
    obs, rewards, terms, truncs, _ = last
    assert sorted(obs) == sorted(env.possible_agents)
    assert all(truncs.values()) and not any(terms.values())
    assert env.sim.steps == 2


def test_rewards_returned_over_an_episode_sum_to_every_boundarys_rewards():
    env = admission(max_cycles=4, executor="serial", num_threads=1)
    _, returned = run(env, seed=2)
    # The same run, reading the model's reward at each boundary.
    sim = _core.Simulation("pcs_admission", {"width": 4, "height": 4})
    sim.reset(env._episode_seed)
    total = 0.0
    while sim.steps < 4:
        if sim.advance() == "boundary":
            total += float(sim.rewards().sum())
        agents, _ = sim.requests()
        while len(agents):
            sim.answer(np.ones(len(agents), dtype=np.int64))
            agents, _ = sim.requests()
    assert returned == total


def test_the_array_path_returns_what_the_dict_path_returns():
    a, b = admission(executor="serial", num_threads=1), admission(executor="serial", num_threads=1)
    obs, _ = a.reset(seed=4)
    b.reset(seed=4)
    while a.agents:
        assert np.flatnonzero(b.needs_action).tolist() == [
            a.possible_agents.index(x) for x in sorted(a.agents, key=a.possible_agents.index)
        ]
        obs, rewards, _, truncs, _ = a.step(dict.fromkeys(a.agents, 0))
        rows = np.zeros(len(b.possible_agents), dtype=np.int64)
        aobs, arewards, _, atruncs = b.step_arrays(rows)
        for name in obs:
            i = a.possible_agents.index(name)
            assert aobs[i].tobytes() == obs[name].tobytes()
            assert arewards[i] == rewards[name]
            assert atruncs[i] == truncs[name]
    assert not b.agents


def test_aec_walks_the_asked_agents_and_ends_in_the_same_bytes():
    digests = []
    for options in ({"decisions": "one_at_a_time"}, {"executor": "parallel", "num_threads": 2}):
        env = admission(**options)
        aec = aec_env(env)
        aec.reset(seed=3)
        last_time = -1.0
        for _ in aec.agent_iter(max_iter=100_000):
            _, _, term, trunc, info = aec.last()
            if not (term or trunc):
                assert info["decision_time"] >= last_time or options.get("executor")
                last_time = info["decision_time"]
            aec.step(None if term or trunc else 1)
        digests.append(env.sim.digest())
    assert digests[0] == digests[1]


def test_one_at_a_time_runs_serially_whatever_executor_was_asked():
    env = admission(decisions="one_at_a_time", executor="parallel", num_threads=2)
    assert (env.sim.executor, env.sim.num_threads, env.sim.decisions) == (
        "serial",
        1,
        "one_at_a_time",
    )


# -- refusals ---------------------------------------------------------------------------------
def test_an_action_for_an_agent_that_did_not_ask_is_refused_by_name():
    env = admission()
    env.reset(seed=0)
    idle = next(a for a in env.possible_agents if a not in env.agents)
    before = env.sim.digest()
    with pytest.raises(ValueError, match=f"{idle}.*did not ask"):
        env.step({**dict.fromkeys(env.agents, 1), idle: 1})
    assert env.sim.digest() == before  # refused before anything ran
    env.step(dict.fromkeys(env.agents, 1))


def test_a_missing_action_for_an_asked_agent_is_refused_by_name():
    env = admission()
    env.reset(seed=0)
    first = env.agents[0]
    with pytest.raises(ValueError, match=f"no action for.*{first}"):
        env.step({a: 1 for a in env.agents if a != first})


def test_an_action_outside_the_space_is_refused():
    env = admission()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(dict.fromkeys(env.agents, 2))
    env.step(dict.fromkeys(env.agents, 1))  # nothing torn


def test_step_before_reset_and_after_the_episode_are_refused():
    env = admission(max_cycles=1)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step({})
    env.reset(seed=0)
    while env.agents:
        env.step(dict.fromkeys(env.agents, 1))
    with pytest.raises(RuntimeError, match="no live agents"):
        env.step({})


@pytest.mark.parametrize(
    ("model", "decisions", "match"),
    [
        ("pcs_admission", "lockstep", "act when they ask"),
        ("pcs", "windows", "never asks"),
        ("pcs_admission", "sometimes", "decisions must be"),
    ],
)
def test_a_decisions_value_the_model_cannot_run_is_refused(model, decisions, match):
    with pytest.raises(ValueError, match=match):
        seer_env.SeerDecisionEnv(model, {"width": 4, "height": 4}, decisions=decisions)


def test_the_lockstep_env_refuses_a_model_whose_agents_ask():
    with pytest.raises(ValueError, match="SeerDecisionEnv"):
        seer_env.SeerParallelEnv("pcs_admission", {"width": 4, "height": 4})


def test_the_runtime_refuses_calls_out_of_order():
    sim = _core.Simulation("pcs_admission", {"width": 4, "height": 4})
    with pytest.raises(RuntimeError, match="before reset"):
        sim.advance()
    sim.reset(0)
    with pytest.raises(RuntimeError, match="no agent waiting"):
        sim.answer(np.zeros(0, dtype=np.int64))
    with pytest.raises(RuntimeError, match="use advance"):
        sim.step(np.zeros(16, dtype=np.int64))
    assert sim.advance() == "decisions"
    with pytest.raises(RuntimeError, match="answer\\(\\) them first"):
        sim.advance()
    with pytest.raises(ValueError):
        sim.answer(np.zeros(len(sim.requests()[0]) + 1, dtype=np.int64))
    sim.answer(np.ones(len(sim.requests()[0]), dtype=np.int64))
    lockstep = _core.Simulation("pcs", {"width": 4, "height": 4})
    lockstep.reset(0)
    with pytest.raises(RuntimeError, match="lockstep"):
        lockstep.advance()


def test_the_reference_refuses_a_parallel_executor():
    with pytest.raises(ValueError, match="one-at-a-time decisions reference"):
        _core.Simulation(
            "pcs_admission", {}, executor="parallel", num_threads=2, decisions="one_at_a_time"
        )


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"twice": True}, "already waiting"),
        ({"outsider": True}, "not an agent"),
    ],
)
def test_requests_that_break_the_contract_raise_contract_violation(config, match):
    env = seer_env.SeerDecisionEnv(Tally, {"n": 3, **config}, max_cycles=2)
    with pytest.raises(seer_env.ContractViolation, match=match):
        env.reset(seed=0)
    env2 = seer_env.SeerDecisionEnv(Tally, {"n": 3}, max_cycles=2)  # a sound config runs
    env2.reset(seed=0)


def test_a_request_in_a_lockstep_model_raises_contract_violation():
    class Undeclared(Tally):
        decisions = False

        def on_action(self, ctx, state, action):
            ctx.request_decision()

    env = seer_env.SeerParallelEnv(Undeclared, {"n": 2}, max_cycles=2)
    env.reset(seed=0)
    with pytest.raises(seer_env.ContractViolation, match="lockstep"):
        env.step(dict.fromkeys(env.agents, 1))
    env.reset(seed=0)  # usable again after reset


def test_a_policy_that_never_answers_leaves_an_env_that_closes_and_resets():
    env = admission(executor="parallel", num_threads=2)
    env.reset(seed=0)
    env.close()  # waiting agents and all: no thread outlives it
    obs, _ = env.reset(seed=0)
    assert obs
    env.step(dict.fromkeys(env.agents, 1))


def test_a_step_interrupted_at_any_point_is_consistent_or_refused_until_reset():
    shadow = admission()
    shadow.reset(seed=0)
    before = shadow.sim.digest()
    shadow.step(dict.fromkeys(shadow.agents, 1))
    after = shadow.sim.digest()
    state = {}

    def prepare():
        env = admission()
        env.reset(seed=0)
        state.update(env=env, actions=dict.fromkeys(env.agents, 1))

    def call():
        return state["env"].step(state["actions"])

    def check(exc):
        env = state["env"]
        if env._torn is None and not env.sim.needs_reset:
            # Consistent: before the call (untouched) or after it (complete).
            assert env.sim.digest() in (before, after)
            env.step(dict.fromkeys(env.agents, 1))
            return
        with pytest.raises(RuntimeError, match="reset"):
            env.step(state["actions"])
        env.reset(seed=0)
        env.step(dict.fromkeys(env.agents, 1))

    points = walk_points(prepare, call, check, lambda result: None)
    assert points > 10


def test_a_runaway_cascade_after_an_answer_is_stopped_by_the_event_budget():
    class Runaway(Tally):
        def on_init(self, ctx, state):
            ctx.schedule(ctx.self, 0.1, 1)  # one ASK

        def on_action(self, ctx, state, action):
            ctx.schedule(ctx.self, ctx.now, 0)  # runs in the answer's own run

        def on_event(self, ctx, state, event):
            if event.kind == 0:
                ctx.schedule(ctx.self, ctx.now, 0)  # an endless chain at one time
            else:
                ctx.request_decision()

    env = seer_env.SeerDecisionEnv(Runaway, {"n": 2}, max_cycles=2, event_budget=1000)
    env.reset(seed=0)
    with pytest.raises(seer_env.EventBudgetExceeded):
        env.step(dict.fromkeys(env.agents, 1))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(dict.fromkeys(env.agents, 1))


def test_pcs_admission_v0_is_a_built_in_env_of_its_own_kind():
    assert seer_env.env_names(decisions=True) == ["pcs_admission_v0"]
    assert "pcs_admission_v0" not in seer_env.env_names(decisions=False)
    env = seer_env.make("pcs_admission_v0", width=4, height=4, max_cycles=2)
    assert isinstance(env, EventDrivenDecisions)
    assert not env.needs_action.any() and env.needs_action.shape == (16,)  # before reset
    env.reset(seed=0)
    assert env.neighbours().shape == (16, 4)  # the pcs workload's env, asked when they ask


def test_a_shortened_agents_list_does_not_skip_an_asked_agent():
    env = admission()
    env.reset(seed=0)
    asked = list(env.agents)
    while len(env.agents) < 2:
        env.step(dict.fromkeys(env.agents, 1))
        asked = list(env.agents)
    env.agents.pop()  # the caller's list, shortened
    with pytest.raises(ValueError, match=f"no action for.*{asked[-1]}"):
        env.step(dict.fromkeys(env.agents, 1))
