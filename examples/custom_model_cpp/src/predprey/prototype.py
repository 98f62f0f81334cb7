"""Predator-prey, the Python prototype (a ``seer_env.PythonModel``).

Written first to design and validate the model; ``src/cpp/predprey.cpp`` is
its C++ port, line for line, and ``seer_env.testing.assert_models_equivalent``
proves the two return the same bytes. See ``src/cpp/predprey.hpp`` for the rules.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

import seer_env

MOVE, CATCH, CAUGHT, RESPAWN = range(4)
ACTION_DX, ACTION_DY = (0, 0, 0, -1, 1), (0, -1, 1, 0, 0)  # stay, up, down, left, right
WALK_DX, WALK_DY = (0, 0, -1, 1), (-1, 1, 0, 0)


class PredPreyPrototype(seer_env.PythonModel):
    """Predators (the agents) pounce on prey that random-walk on a torus."""

    name = "predprey_prototype"
    state_dtype = np.dtype(
        [
            ("x", "<i4"),
            ("y", "<i4"),
            ("alive", "<u4"),
            ("caught_step", "<u4"),
            ("catches", "<u8"),
            ("attempts", "<u8"),
        ]
    )
    public_fields = ("x", "y", "alive")
    payload_dtype = np.dtype([("x", "<i4"), ("y", "<i4")])
    event_kinds = ("MOVE", "CATCH", "CAUGHT", "RESPAWN")
    info_keys = ("catches", "attempts")
    total_keys = ("prey_caught",)
    agent_prefix = "predator"

    # The declaration, the same table as the C++ port's (src/cpp/workload.cpp):
    # seer_env.testing.assert_declarations_match compares the two.
    params = (
        {"name": "width", "type": "int", "default": 12, "low": 1, "high": 4096},
        {"name": "height", "type": "int", "default": 12, "low": 1, "high": 4096},
        {"name": "predators", "type": "int", "default": 4, "low": 1, "high": 1 << 20},
        {"name": "prey", "type": "int", "default": 16, "low": 1, "high": 1 << 20},
        {"name": "view_radius", "type": "int", "default": 2, "low": 0, "high": 16},
        {"name": "prey_move_mean", "type": "real", "default": 0.3, "low": 0.0, "high": 1e6,
         "low_open": True},
        {"name": "respawn_time", "type": "real", "default": 2.0, "low": 0.0, "high": 1e6},
        {"name": "step_cost", "type": "real", "default": 0.01, "low": 0.0, "high": 1e6},
        {"name": "lookahead", "type": "real", "default": 0.25, "low": 0.0, "high": 1e6,
         "low_open": True},
    )  # fmt: skip

    def __init__(
        self,
        width,
        height,
        predators,
        prey,
        view_radius,
        prey_move_mean,
        respawn_time,
        step_cost,
        lookahead,
    ):
        super().__init__()
        self.width, self.height = int(width), int(height)
        self.predators, self.prey, self.radius = int(predators), int(prey), int(view_radius)
        self.move_mean, self.respawn_time = float(prey_move_mean), float(respawn_time)
        self.step_cost = float(step_cost)
        self.num_entities = self.predators + self.prey
        self.num_agents = self.predators
        self.lookahead, self.dt = float(lookahead), 1.0
        window = (2 * self.radius + 1) ** 2
        high = np.full(2 + window, self.prey, np.float32)
        high[:2] = 1.0
        self.observation_space = spaces.Box(np.zeros_like(high), high, dtype=np.float32)
        self.action_space = spaces.Discrete(5)
        self.state_space = spaces.Box(0, self.prey, (self.width * self.height,), np.float32)
        self.prey_count = np.zeros((self.height, self.width), np.int32)

    # -- handlers --------------------------------------------------------------------------------
    def place(self, ctx, state):
        state["x"] = ctx.rng.below(self.width)
        state["y"] = ctx.rng.below(self.height)
        state["alive"] = 1

    def on_init(self, ctx, state):
        self.place(ctx, state)
        if ctx.self >= self.predators:
            ctx.schedule(ctx.self, ctx.now + ctx.rng.exponential(self.move_mean), MOVE)

    def on_step_begin(self, ctx, state):
        if ctx.self < self.predators:
            state["caught_step"] = 0

    def on_action(self, ctx, state, action):
        x = (int(state["x"]) + ACTION_DX[action]) % self.width
        y = (int(state["y"]) + ACTION_DY[action]) % self.height
        state["x"], state["y"] = x, y
        prey = ctx.snapshot[self.predators :]
        here = (prey["alive"] != 0) & (prey["x"] == x) & (prey["y"] == y)
        for p in np.flatnonzero(here) + self.predators:  # ascending ids, as in C++
            state["attempts"] += 1
            ctx.schedule(int(p), ctx.now + self.lookahead, CATCH, (x, y))

    def on_event(self, ctx, state, event):
        if event.kind == MOVE:
            if not state["alive"]:
                return
            d = ctx.rng.below(4)
            state["x"] = (int(state["x"]) + WALK_DX[d]) % self.width
            state["y"] = (int(state["y"]) + WALK_DY[d]) % self.height
            ctx.schedule(ctx.self, ctx.now + ctx.rng.exponential(self.move_mean), MOVE)
        elif event.kind == CATCH:
            cell = event.payload
            if not state["alive"] or state["x"] != cell["x"] or state["y"] != cell["y"]:
                return
            state["alive"] = 0
            state["catches"] += 1
            ctx.schedule(event.source, ctx.now + self.lookahead, CAUGHT)
            ctx.schedule(ctx.self, ctx.now + self.respawn_time, RESPAWN)
        elif event.kind == CAUGHT:
            state["catches"] += 1
            state["caught_step"] += 1
        elif event.kind == RESPAWN:
            self.place(ctx, state)
            ctx.schedule(ctx.self, ctx.now + ctx.rng.exponential(self.move_mean), MOVE)

    # -- boundary --------------------------------------------------------------------------------
    def after_snapshot(self, snapshot):
        prey = snapshot[self.predators :]
        live = prey[prey["alive"] != 0]
        self.prey_count[:] = 0
        np.add.at(self.prey_count, (live["y"], live["x"]), 1)

    def observe(self, agent, state, snapshot):
        x, y, r = int(state["x"]), int(state["y"]), self.radius
        rows = (y + np.arange(-r, r + 1)) % self.height
        cols = (x + np.arange(-r, r + 1)) % self.width
        obs = np.empty(self.observation_space.shape, np.float32)
        obs[0] = np.float32(x) / np.float32(self.width)
        obs[1] = np.float32(y) / np.float32(self.height)
        obs[2:] = self.prey_count[np.ix_(rows, cols)].ravel()
        return obs

    def reward(self, agent, state, snapshot):
        return float(state["caught_step"]) - self.step_cost

    def info(self, agent, state, snapshot):
        return (int(state["catches"]), int(state["attempts"]))

    def global_state(self, states, snapshot):
        return self.prey_count.ravel().astype(np.float32)

    def totals(self, states):
        return (int(states["catches"][self.predators :].sum()),)
