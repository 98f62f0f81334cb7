"""HeatRing (heat_ring_prototype.py) ported to a NumbaModel, with planted porting bugs.

``mode`` picks the bug, as in the C++ port of tests/support/plugins/planted:
0 none, 1 a reordered floating-point expression, 5 a cross-entity event
before now + lookahead. Two bugs are classes of their own, because compiling
them is refused (a write to a read-only record), which fails every mode of a
class: ``NeighbourWrite`` (2, a write to a neighbour's record: the snapshot,
the only neighbour record a handler can reach) and ``KeptState`` (4, a reset
hook that keeps state from the last episode through the parameter record,
the one record that outlives a reset). (3, a live read of a neighbour's
state, cannot be written on this route: a handler sees only its own state
and the snapshot.)
"""

import numpy as np
from gymnasium import spaces

import seer_env
from seer_env import handler_api as api

TOKEN, TICK = 0, 1
PARAMS = np.dtype([("n", "<u8"), ("mode", "<i8"), ("episodes", "<u8")])


@seer_env.kernel
def handle(ctx, state, snapshot, params, kind):
    """HeatRing's on_event (a helper: NeighbourWrite adds its bug after it)."""
    if kind == TICK:
        u = api.uniform(ctx)
        right = (api.self_id(ctx) + np.uint32(1)) % np.uint32(params["n"])
        neighbour = snapshot[right]["heat"]
        if params["mode"] == 1:  # a bug: the same sum, reordered
            state["heat"] = state["heat"] * 0.5 + (u * 0.3 + 0.1)
        else:
            state["heat"] = state["heat"] * 0.5 + u * 0.3 + 0.1
        state["heat"] += neighbour * 0.25
        api.schedule(ctx, api.self_id(ctx), api.now(ctx) + 0.3, TICK)
    else:
        state["tokens"] += np.uint64(1)
        state["heat"] += 1.0


class HeatRingNumba(seer_env.NumbaModel):
    """A ring of agents passing heat and tokens (HeatRing, ported)."""

    state_dtype = np.dtype([("heat", "<f8"), ("tokens", "<u8")])
    public_dtype = np.dtype([("heat", "<f8")])
    payload_dtype = np.dtype([("raw", "<u8", (8,))])
    params_dtype = PARAMS
    event_kinds = ("TOKEN", "TICK")
    name = "heat_ring"
    params = (
        {"name": "num_entities", "type": "int", "default": 6, "low": 2, "high": 1 << 20,
         "doc": "agents in the ring"},
        {"name": "mode", "type": "int", "default": 0, "low": 0, "high": 5,
         "doc": "which bug (0: none; 1 or 5)"},
    )  # fmt: skip

    def __init__(self, num_entities=6, mode=0, compiled=True):
        super().__init__(compiled=compiled)
        self.num_entities = self.num_agents = num_entities
        self.lookahead, self.dt = 0.5, 1.0
        self.observation_space = spaces.Box(0, 1e9, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.params_record = self.make_params(n=num_entities, mode=mode)

    @staticmethod
    def on_init(ctx, state, snapshot, params):
        api.schedule(ctx, api.self_id(ctx), 0.1, TICK)

    @staticmethod
    def on_action(ctx, state, snapshot, params, action):
        if action:
            target = (api.self_id(ctx) + np.uint32(1)) % np.uint32(params["n"])
            early = params["mode"] == 5  # a bug: a cross-entity event at now
            at = api.now(ctx) if early else api.now(ctx) + api.lookahead(ctx)
            api.schedule(ctx, target, at, TOKEN)

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        handle(ctx, state, snapshot, params, kind)

    @staticmethod
    def write_snapshot(state, public, params):
        public["heat"] = state["heat"]

    @staticmethod
    def observe(agent, state, snapshot, params, out):
        out[0] = state["heat"]
        out[1] = state["tokens"]

    @staticmethod
    def reward(agent, state, snapshot, params):
        return np.float64(state["tokens"])


class NeighbourWrite(HeatRingNumba):
    """Bug 2: ``on_event`` also writes the right neighbour's snapshot record."""

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        handle(ctx, state, snapshot, params, kind)
        if kind == TICK:
            right = (api.self_id(ctx) + np.uint32(1)) % np.uint32(params["n"])
            snapshot[right]["heat"] = 0.0


class KeptState(HeatRingNumba):
    """Bug 4: ``reset`` carries state over from the last episode in ``params``."""

    @staticmethod
    def reset(states, params):
        for e in range(states.shape[0]):
            states[e]["tokens"] = params["episodes"]
        params["episodes"] += np.uint64(1)
