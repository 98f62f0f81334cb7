"""``verify`` says what it exercised, and warns about code no run reached.

A bug planted in an event kind that the config never reaches passes every
comparison (no run executes it); the coverage check names the kind instead of
letting the report read as a clean pass.
"""

import numpy as np
from gymnasium import spaces

import seer_env
from seer_env.testing import check_contract, verify


class Relay(seer_env.PythonModel):
    """Agents pass parcels right; a cell holding more than ``capacity`` empties itself."""

    state_dtype = np.dtype([("held", "<u8"), ("overflows", "<u8")])
    event_kinds = ("PARCEL", "OVERFLOW")
    info_keys = ("held",)
    name = "relay"
    params = (
        {"name": "num_entities", "type": "int", "default": 4, "low": 2, "high": 1000},
        {"name": "capacity", "type": "int", "default": 1000, "low": 1, "high": 10**9},
    )

    def __init__(self, num_entities=4, capacity=1000):
        super().__init__()
        self.num_entities = self.num_agents = int(num_entities)
        self.capacity = int(capacity)
        self.lookahead, self.dt = 0.5, 1.0
        self.observation_space = spaces.Box(0, np.inf, (1,), np.float32)
        self.action_space = spaces.Discrete(2)

    def on_action(self, ctx, state, action):
        if action:
            right = (ctx.self + 1) % self.num_entities
            ctx.schedule(right, ctx.now + self.lookahead, 0)

    def on_event(self, ctx, state, event):
        if event.kind == 0:
            state["held"] += 1
            if state["held"] > self.capacity:
                ctx.schedule(ctx.self, ctx.now, 1)
        else:
            self.overflow(state)

    def overflow(self, state):
        state["held"] = 0
        state["overflows"] += 1

    def observe(self, agent, state, snapshot):
        return [state["held"]]

    def reward(self, agent, state, snapshot):
        return -float(state["overflows"])

    def info(self, agent, state, snapshot):
        return [int(state["held"])]


class PlantedRelay(Relay):
    """The port, with a bug in the OVERFLOW handler: it keeps one parcel."""

    def overflow(self, state):
        state["held"] = 1
        state["overflows"] += 1


def test_a_bug_in_a_kind_the_config_never_reaches_passes_but_is_warned_about():
    report = verify(PlantedRelay, Relay, seeds=(0, 1, 2), steps=30)
    assert report.ok  # every comparison passed: OVERFLOW never ran
    assert [c.name for c in report.failures] == []
    (warning,) = report.warnings
    assert warning.name == "coverage (port)"
    assert "event kind 'OVERFLOW' never ran in 3 seeds x 30 steps" in warning.detail
    assert "PARCEL " in warning.detail and "OVERFLOW 0" in warning.detail
    assert "config=" in warning.detail and "steps=" in warning.detail
    assert "verify: passed with 1 warning(s)" in str(report)
    assert "WARNING coverage (port)" in str(report)
    # The config the warning asks for reaches the kind, and the bug is caught.
    caught = verify(PlantedRelay, Relay, config={"capacity": 2}, steps=30, strict=False)
    assert "prototype vs port" in {c.name for c in caught.failures}
    assert not caught.warnings


def test_coverage_counts_each_hook_and_kind_of_the_checked_runs():
    report = check_contract(
        lambda **kw: seer_env.SeerParallelEnv(Relay, {"capacity": 2}, **kw),
        seeds=(0, 1),
        steps=10,
        policy=lambda seed, step, env: {a: 1 for a in env.agents},
    )
    coverage = report.coverage
    # 4 agents: on_init at each reset, on_step_begin and on_action every step.
    assert (coverage.on_init, coverage.on_step_begin, coverage.on_action) == (8, 80, 80)
    assert coverage.events["PARCEL"] == 2 * 4 * 10  # each arrives half a step after its action
    assert coverage.events["OVERFLOW"] > 0
    assert coverage.never_ran() == []
    assert str(coverage).startswith("on_init 8, on_step_begin 80, on_action 80; events: PARCEL ")


def test_unchecked_steps_are_not_counted():
    env = seer_env.SeerParallelEnv(Relay, {}, check_steps=0)
    env.reset(seed=0)
    for _ in range(3):
        env.step({a: 1 for a in env.agents})
    counts = env.sim.checked_counts()
    assert counts["on_init"] == counts["on_action"] == 0
    assert counts["events"] == {"PARCEL": 0, "OVERFLOW": 0}
    checked = seer_env.SeerParallelEnv(Relay, {}, check_steps=2)
    checked.reset(seed=0)
    for _ in range(3):
        checked.step({a: 1 for a in checked.agents})
    counts = checked.sim.checked_counts()
    assert counts["on_action"] == 2 * 4  # the two checked steps only
