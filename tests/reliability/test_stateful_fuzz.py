"""Stateful fuzzing: random sequences of reset/step/step_arrays/close/pickle with
valid and invalid inputs, on small pcs_v0 and aircraft_v0 envs.

The env under test runs on a random executor and thread count; a serial shadow
env receives the same valid calls. After every call both must hold the same
bytes (digest, agents, outputs), and every invalid call must raise ValueError
(bad input) or RuntimeError (call order) and change nothing.
"""

import cloudpickle
import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from seer_env.envs import aircraft_v0, pcs_v0

EXECUTORS = [
    ("serial", 1),
    ("parallel", 1),
    ("parallel", 2),
    ("parallel", 3),
    ("locked", 2),
    ("barrier", 2),
]
MAX_CYCLES = 6


def make(kind, executor, num_threads):
    if kind == "pcs":
        return pcs_v0.parallel_env(
            width=3,
            height=2,
            phones_per_cell=3,
            handoff_delay=7.0,
            max_cycles=MAX_CYCLES,
            seed=0,
            executor=executor,
            num_threads=num_threads,
        )
    return aircraft_v0.parallel_env(
        num_uavs=5,
        substeps=2,
        arena_size=8.0,
        max_cycles=MAX_CYCLES,
        seed=0,
        executor=executor,
        num_threads=num_threads,
    )


BAD_DISCRETE = [np.nan, np.inf, -1, 11, 2.5, 1e30, "x", None, [1, 2], 2**70, 1j]
BAD_BOX = [  # out of range (inf included) is clipped, not bad: only NaN among the values
    np.full(4, np.nan),
    np.array([0, np.nan, 0, 0]),
    np.zeros(3),
    np.zeros((4, 1)),
    "abcd",
    None,
    np.zeros(4, complex),
]
BAD_SEEDS = [-1, 2**64, 1.5, "1", True, [3]]


def same_outputs(a, b):
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_outputs(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_outputs(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) is type(b) and a == b


class EnvMachine(RuleBasedStateMachine):
    """One env under test, one serial shadow; rules apply the same calls to both."""

    @initialize(kind=st.sampled_from(["pcs", "aircraft"]), executor=st.sampled_from(EXECUTORS))
    def build(self, kind, executor):
        self.kind = kind
        self.env = make(kind, *executor)
        self.shadow = make(kind, "serial", 1)
        self.reset_once = False

    @property
    def running(self):
        return self.reset_once and bool(self.shadow.agents)

    def valid_actions(self, data, env):
        space = env.action_space(env.possible_agents[0])
        if self.kind == "pcs":
            values = data.draw(
                st.lists(
                    st.integers(0, space.n - 1), min_size=len(env.agents), max_size=len(env.agents)
                )
            )
        else:
            floats = st.floats(-1.0, 1.0, width=32)
            values = [
                np.array(data.draw(st.lists(floats, min_size=4, max_size=4)), np.float32)
                for _ in env.agents
            ]
        return dict(zip(env.agents, values))

    def expect_rejected(self, call, errors=(ValueError, RuntimeError)):
        """call() must raise one of errors (RuntimeError alone when not running)."""
        if not self.running:
            errors = (RuntimeError, ValueError) if self.reset_once else (RuntimeError,)
        try:
            call()
        except errors:
            return
        raise AssertionError("an invalid call was accepted")

    # -- valid calls --------------------------------------------------------------------------
    @rule(seed=st.none() | st.integers(0, 2**64 - 1))
    def reset(self, seed):
        got = self.env.reset(seed=seed)
        want = self.shadow.reset(seed=seed)
        assert same_outputs(got, want)
        self.reset_once = True

    @precondition(lambda self: self.running)
    @rule(data=st.data())
    def step(self, data):
        actions = self.valid_actions(data, self.shadow)
        assert same_outputs(self.env.step(actions), self.shadow.step(actions))

    @precondition(lambda self: self.running)
    @rule(data=st.data())
    def step_arrays(self, data):
        actions = self.valid_actions(data, self.shadow)
        n = len(self.shadow.possible_agents)
        arr = np.zeros(
            (n,) if self.kind == "pcs" else (n, 4), np.int64 if self.kind == "pcs" else np.float32
        )
        for agent, value in actions.items():
            arr[self.shadow._agent_index[agent]] = value
        assert same_outputs(self.env.step_arrays(arr), self.shadow.step_arrays(arr))

    @rule()
    def pickle_roundtrip(self):
        self.env = cloudpickle.loads(cloudpickle.dumps(self.env))

    @rule()
    def close(self):
        self.env.close()  # releases nothing; the env stays usable

    # -- invalid calls ------------------------------------------------------------------------
    @rule(data=st.data())
    def step_bad_value(self, data):
        actions = self.valid_actions(data, self.shadow) if self.running else {}
        if actions:
            agent = data.draw(st.sampled_from(sorted(actions)))
            actions[agent] = data.draw(
                st.sampled_from(BAD_DISCRETE if self.kind == "pcs" else BAD_BOX)
            )
        self.expect_rejected(lambda: self.env.step(actions))

    @rule(data=st.data(), how=st.sampled_from(["missing", "unknown", "not-a-dict", "dead"]))
    def step_bad_agents(self, data, how):
        actions = self.valid_actions(data, self.shadow) if self.running else {}
        if how == "missing" and actions:
            if self.kind != "pcs":
                return  # Box: a live agent without an action hovers (valid)
            actions.pop(next(iter(actions)))
        elif how == "unknown":
            actions["ghost_0"] = 0
        elif how == "not-a-dict":
            actions = list(actions.values())
        elif how == "dead" or not actions:
            actions = {a: 0 for a in self.shadow.possible_agents}
            if self.running and self.shadow.agents == self.shadow.possible_agents:
                return  # nobody is dead: this would be valid
        self.expect_rejected(lambda: self.env.step(actions))

    @rule(shape=st.sampled_from([(0,), (3,), (7, 4), (6, 4, 1)]))
    def step_arrays_bad_shape(self, shape):
        self.expect_rejected(lambda: self.env.step_arrays(np.zeros(shape)))

    @rule(seed=st.sampled_from(BAD_SEEDS))
    def reset_bad_seed(self, seed):
        try:
            self.env.reset(seed=seed)
        except ValueError:
            return
        raise AssertionError(f"reset(seed={seed!r}) was accepted")

    # -- what must always hold --------------------------------------------------------------
    @invariant()
    def same_state_as_serial(self):
        if not hasattr(self, "env"):
            return
        assert self.env.agents == self.shadow.agents
        if self.reset_once:
            assert self.env.sim.digest() == self.shadow.sim.digest()
            assert self.env.sim.needs_reset is False


EnvMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestEnvMachine = EnvMachine.TestCase
