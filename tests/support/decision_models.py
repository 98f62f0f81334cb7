"""Small models whose agents ask for actions (event-driven decisions), for the tests.

``Tally``: each agent counts ADD events it sends itself at random times and
asks for an action at its own ASK events; the action is added to its total
and decides the delay to its next ASK. The observation at a request is the
agent's count and total: an agent whose later ADD events ran before its
answer (the planted early-release bug) shows a count it could not have at the
request's time, a silent difference that only the equivalence tests see. A
neighbour's count reaches it through the snapshot, and agents send each other
PINGs at >= now + lookahead, so windows and cross-entity events both matter.

``TallyNumba`` is the same model as a ``NumbaModel`` (compiled: every
executor and thread count).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from seer_env import PythonModel
from seer_env import handler_api as api
from seer_env.models.numba import NumbaModel

ADD, ASK, PING = 0, 1, 2
_STATE = np.dtype([("count", "<i8"), ("total", "<i8"), ("pings", "<i8"), ("asked", "<i8")])
_PUBLIC = np.dtype([("count", "<i8")])


class Tally(PythonModel):
    """Agents that ask for an action at their own ASK events (PythonModel)."""

    state_dtype = _STATE
    public_fields = ("count",)
    event_kinds = ("ADD", "ASK", "PING")
    decisions = True

    def __init__(self, n: int = 6, outsider: bool = False, twice: bool = False) -> None:
        self.num_agents = n
        self.num_entities = n + (1 if outsider else 0)
        self.lookahead = 0.25
        self.dt = 1.0
        self.twice = twice
        self.observation_space = spaces.Box(-1e9, 1e9, (4,), np.float32)
        self.action_space = spaces.Discrete(3)
        self.state_space = None

    def on_init(self, ctx, state) -> None:
        ctx.schedule(ctx.self, ctx.rng.exponential(0.2), ADD)
        ctx.schedule(ctx.self, ctx.rng.exponential(0.3), ASK)

    def on_action(self, ctx, state, action) -> None:
        state["total"] += int(action)
        ctx.schedule(ctx.self, ctx.now + 0.1 * (int(action) + 1), ASK)

    def on_event(self, ctx, state, event) -> None:
        if event.kind == ADD:
            state["count"] += 1
            ctx.schedule(ctx.self, ctx.now + ctx.rng.exponential(0.2), ADD)
        elif event.kind == PING:
            state["pings"] += 1
        else:
            state["asked"] += 1
            ctx.request_decision()
            if self.twice:
                ctx.request_decision()
            neighbour = (ctx.self + 1) % self.num_entities
            ctx.schedule(neighbour, ctx.now + self.lookahead, PING)

    def observe(self, agent, state, snapshot):
        neighbour = (agent + 1) % self.num_agents
        return np.array(
            [state["count"], state["total"], state["pings"], snapshot[neighbour]["count"]],
            np.float32,
        )

    def reward(self, agent, state, snapshot) -> float:
        return float(state["total"] - state["count"] * 0.5)


class TallyNumba(NumbaModel):
    """``Tally`` as a NumbaModel."""

    state_dtype = _STATE
    public_dtype = _PUBLIC
    event_kinds = ("ADD", "ASK", "PING")
    decisions = True
    name = "TallyNumba"

    def __init__(self, n: int = 6, compiled: bool = True) -> None:
        super().__init__(compiled=compiled)
        self.num_agents = self.num_entities = n
        self.lookahead = 0.25
        self.dt = 1.0
        self.observation_space = spaces.Box(-1e9, 1e9, (4,), np.float32)
        self.action_space = spaces.Discrete(3)
        self.state_space = None

    @staticmethod
    def on_init(ctx, state, snapshot, params):
        me = api.self_id(ctx)
        api.schedule(ctx, me, api.exponential(ctx, 0.2), ADD)
        api.schedule(ctx, me, api.exponential(ctx, 0.3), ASK)

    @staticmethod
    def on_action(ctx, state, snapshot, params, action):
        state["total"] += action
        api.schedule(ctx, api.self_id(ctx), api.now(ctx) + 0.1 * (action + 1), ASK)

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        me = api.self_id(ctx)
        if kind == ADD:
            state["count"] += 1
            api.schedule(ctx, me, api.now(ctx) + api.exponential(ctx, 0.2), ADD)
        elif kind == PING:
            state["pings"] += 1
        else:
            state["asked"] += 1
            api.request_decision(ctx)
            neighbour = (me + 1) % api.num_entities(ctx)
            api.schedule(ctx, neighbour, api.now(ctx) + api.lookahead(ctx), PING)

    @staticmethod
    def write_snapshot(state, public, params):
        public["count"] = state["count"]

    @staticmethod
    def observe(agent, state, snapshot, params, out):
        neighbour = (agent + 1) % snapshot.shape[0]
        out[0] = state["count"]
        out[1] = state["total"]
        out[2] = state["pings"]
        out[3] = snapshot[neighbour]["count"]

    @staticmethod
    def reward(agent, state, snapshot, params):
        return float(state["total"] - state["count"] * 0.5)
