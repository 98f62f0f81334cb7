"""A small PythonModel prototype: a ring of agents passing heat and tokens.

The prototype of tests/support/plugins/planted (C++ ports with planted bugs) and of
the scaffold journey test (test_scaffold.py ports it from the generated stubs).
"""

import numpy as np
from gymnasium import spaces

import seer_env


class HeatRing(seer_env.PythonModel):
    """A ring of agents passing heat and tokens."""

    state_dtype = np.dtype([("heat", "<f8"), ("tokens", "<u8")])
    public_fields = ("heat",)
    event_kinds = ("TOKEN", "TICK")
    name = "heat_ring"
    params = (
        {"name": "num_entities", "type": "int", "default": 6, "low": 2, "high": 1 << 20,
         "doc": "agents in the ring"},
        {"name": "mode", "type": "int", "default": 0, "low": 0, "high": 5,
         "doc": "which bug (0: none)"},
    )  # fmt: skip

    def __init__(self, num_entities=6, mode=0):
        super().__init__()
        self.num_entities = self.num_agents = num_entities
        self.lookahead, self.dt = 0.5, 1.0
        self.observation_space = spaces.Box(0, 1e9, (2,), np.float32)
        self.action_space = spaces.Discrete(2)

    def _next(self, ctx):
        return (ctx.self + 1) % self.num_entities

    def on_init(self, ctx, state):
        ctx.schedule(ctx.self, 0.1, 1)

    def on_action(self, ctx, state, action):
        if action:
            ctx.schedule(self._next(ctx), ctx.now + self.lookahead, 0)

    def on_event(self, ctx, state, event):
        if event.kind == 1:
            u = ctx.rng.uniform()
            neighbour = ctx.snapshot[self._next(ctx)]["heat"]
            state["heat"] = state["heat"] * 0.5 + u * 0.3 + 0.1
            state["heat"] += neighbour * 0.25
            ctx.schedule(ctx.self, ctx.now + 0.3, 1)
        else:
            state["tokens"] += 1
            state["heat"] += 1.0

    def observe(self, agent, state, snapshot):
        return [state["heat"], state["tokens"]]

    def reward(self, agent, state, snapshot):
        return float(state["tokens"])
