"""A NumbaModel that fails on demand (params["fault"]), for the error tests.

Kept out of test_numba_model.py so that editing the tests does not change this
file and invalidate its numba cache.
"""

import numpy as np
from gymnasium import spaces

from seer_env import NumbaModel
from seer_env import handler_api as api

# params["fault"]: which failure to inject.
NONE, RAISE_IN_EVENT, EARLY_SCHEDULE, RAISE_IN_OBSERVE = range(4)
BELOW_ZERO, BAD_TARGET, MIXED_FLOATS, WRITE_SNAPSHOT, TWO_RECORDS = range(4, 9)
PING = 0
PAYLOAD = np.dtype([("hops", "<u8")])


class Faulty(NumbaModel):
    """Ring of pings: every agent pings the next at now + 0.5 each step."""

    state_dtype = np.dtype([("pings", "<u8")])
    public_dtype = np.dtype([("pings", "<u8")])
    payload_dtype = PAYLOAD
    params_dtype = np.dtype([("fault", "<i8")])
    event_kinds = ("PING",)

    def __init__(self, n=3, fault=NONE, compiled=True):
        super().__init__(compiled=compiled)
        self.num_entities = self.num_agents = n
        self.lookahead, self.dt = 0.5, 1.0
        self.observation_space = spaces.Box(0, np.inf, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.params_record = self.make_params(fault=fault)

    @staticmethod
    def on_action(ctx, state, snapshot, params, action):
        target = (api.self_id(ctx) + 1) % api.num_entities(ctx)
        payload = np.zeros(1, PAYLOAD)  # the array, not [0]: see api.schedule
        payload[0]["hops"] = 1
        api.schedule(ctx, target, api.now(ctx) + api.lookahead(ctx), PING, payload)

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        state["pings"] += payload["hops"]
        fault = params["fault"]
        if fault == RAISE_IN_EVENT:
            raise ValueError("boom in on_event")
        if fault == EARLY_SCHEDULE:
            other = (api.self_id(ctx) + 1) % api.num_entities(ctx)
            api.schedule(ctx, other, api.now(ctx) + 0.25, PING, payload)
            # A compiled handler goes on after a breach: the runtime still raises it.
            api.schedule(ctx, api.self_id(ctx), api.now(ctx) + 0.25, PING, payload)
        if fault == BELOW_ZERO:
            api.below(ctx, 0)
        if fault == WRITE_SNAPSHOT:
            # A write the compile-time check does not follow (through a tuple):
            # compiled code can make it; check=True catches it.
            rows = (snapshot,)
            rows[0][0]["pings"] = 99
        if fault == TWO_RECORDS:
            api.schedule(ctx, api.self_id(ctx), api.now(ctx) + 1.0, PING, np.zeros(2, PAYLOAD))
        if fault == BAD_TARGET:
            api.schedule(ctx, api.num_entities(ctx) + 5, api.now(ctx) + 1.0, PING, payload)

    @staticmethod
    def write_snapshot(state, public, params):
        public["pings"] = state["pings"]

    @staticmethod
    def observe(agent, state, snapshot, params, out):
        if params["fault"] == RAISE_IN_OBSERVE:
            raise ValueError("boom in observe")
        out[0] = state["pings"]

    @staticmethod
    def reward(agent, state, snapshot, params):
        if params["fault"] == MIXED_FLOATS:
            # numpy keeps float32 + a Python float in float32, numba computes it
            # in float64: the modes differ, and the kit must say so.
            return np.float64(np.float32(state["pings"]) + 0.2)
        return np.float64(state["pings"])
