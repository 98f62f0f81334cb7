"""seer_env.testing: the kit passes correct models and names what breaks in broken ones."""

import importlib
import random

import numpy as np
import pytest
from ring_model import Ring, all_send

import seer_env
from seer_env.testing import (
    assert_models_equivalent,
    assert_serial_equivalent,
    check_contract,
    first_difference,
)

# Small, fast configs of every built-in env present (aircraft_v0 once it lands).
BUILTIN_CONFIGS = {
    "pcs_v0": {"width": 6, "height": 5, "phones_per_cell": 8, "handoff_delay": 10.0},
    "aircraft_v0": {},
}


def builtin(name):
    module = importlib.import_module(f"seer_env.envs.{name}")
    return lambda **kw: module.parallel_env(**BUILTIN_CONFIGS.get(name, {}), **kw)


@pytest.mark.parametrize("name", seer_env.env_names(decisions=False))
def test_builtin_env_is_serial_equivalent(name):
    assert_serial_equivalent(builtin(name), seeds=(0, 1), steps=12, threads=(1, 2, 3))


@pytest.mark.parametrize("name", seer_env.env_names(decisions=False))
def test_builtin_env_obeys_the_contract(name):
    report = check_contract(builtin(name), seeds=(0, 5), steps=8)
    assert report.ok and report.seeds == 2 and report.steps == 16


@pytest.mark.parametrize("name", seer_env.env_names(decisions=False))
def test_builtin_env_equals_itself_as_a_model(name):
    assert_models_equivalent(builtin(name), builtin(name), steps=5)


# -- first_difference: what counts as "the same bytes" -------------------------------------------
def test_first_difference_is_byte_exact():
    assert first_difference({"a": 1.0, "b": 2}, {"a": 1.0, "b": 2}) is None
    assert "different order" in first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert "0x0.0p+0" in first_difference({"a": 0.0}, {"a": -0.0})
    assert "(bool) != 1 (int)" in first_difference(True, 1)
    found = first_difference(np.zeros(3, np.float32), np.zeros(3, np.float64))
    assert found == "value: float32[3] != float64[3]"
    found = first_difference({"x": np.array([1.0, 2.0], np.float32)}, {"x": np.array([1.0, 2.5])})
    assert found.startswith("['x']: float32[2] != float64[2]")
    found = first_difference(np.array([1, 2, 3]), np.array([1, 5, 3]))
    assert found.startswith("value[1]: ") and "2" in found and "5" in found
    assert first_difference(np.array([np.nan]), np.array([np.nan])) is None


# -- deliberately broken Python models ------------------------------------------------------------
def ring_fn(model=Ring, **config):
    return lambda **kw: seer_env.SeerParallelEnv(model, config, **kw)


class OffByOne(Ring):
    def observe(self, agent, state, snapshot):
        return [state["tokens"], snapshot[(agent - 1) % self.num_entities]["tokens"]]


def test_models_equivalent_names_the_first_difference():
    assert_models_equivalent(ring_fn(), ring_fn())
    with pytest.raises(
        AssertionError,
        match=r"model b differs from model a \(seed 0\) at step \d+: "
        r"\['observations'\]\['agent_\d'\]\[1\]: ",
    ):
        assert_models_equivalent(ring_fn(), ring_fn(OffByOne))


def test_models_equivalent_compares_spaces_first():
    with pytest.raises(AssertionError, match="before any step: possible_agents: 5 vs 4 agents"):
        assert_models_equivalent(ring_fn(num_entities=5), ring_fn(num_entities=4))


class WritesNeighbour(Ring):
    def reset(self, states):
        self.all_states = states  # smuggled out: the bug

    def on_event(self, ctx, state, event):
        super().on_event(ctx, state, event)
        self.all_states[(ctx.self + 1) % self.num_entities]["hops"] += 1


class GlobalRandom(Ring):
    def on_action(self, ctx, state, action):
        state["draw"] = random.random()  # not the entity's stream


class OutOfSpace(Ring):
    def observe(self, agent, state, snapshot):
        return [-1.0, 0.0]


def test_check_contract_passes_a_correct_model():
    report = check_contract(ring_fn(), seeds=(0, 1), steps=5)
    assert report.ok and str(report) == "contract check: 2 seeds, 10 steps: no violations"


@pytest.mark.parametrize(
    ("model", "rule", "message"),
    [
        (
            WritesNeighbour,
            "event-locality",
            "entity 1 handling 'TOKEN' .* wrote the state of entity 2",
        ),
        (GlobalRandom, "determinism", r"second run .* differs at step 1: \['rewards'\]"),
        (OutOfSpace, "outputs", "observation of agent_0 is outside observation_space"),
    ],
)
def test_check_contract_reports_broken_python_models(model, rule, message):
    report = check_contract(ring_fn(model), steps=3, strict=False)
    assert not report.ok and {v.rule for v in report.violations} == {rule}
    with pytest.raises(AssertionError, match=message):
        check_contract(ring_fn(model), steps=3)


def test_writes_to_other_states_are_caught_only_in_checked_steps():
    # A plain env checks its first steps (check_steps, by default).
    env = seer_env.SeerParallelEnv(WritesNeighbour, {})
    env.reset(seed=0)
    with pytest.raises(seer_env.ContractViolation, match="wrote the state of entity"):
        env.step(all_send(env))
    unchecked = seer_env.SeerParallelEnv(WritesNeighbour, {}, check_steps=0)
    unchecked.reset(seed=0)
    unchecked.step(all_send(unchecked))  # the reason check_contract runs with check=True


def test_serial_equivalent_skips_threads_for_python_models_and_says_so():
    with pytest.warns(UserWarning, match=r"parallel executors skipped \(a PythonModel runs"):
        assert_serial_equivalent(ring_fn(), seeds=(0,), steps=5)
