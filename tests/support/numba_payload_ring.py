"""A NumbaModel ring that builds payloads two ways: ``schedule_values`` or a one-record array.

``by_array`` picks the way; both must schedule the same bytes. With ``forward``,
a handler also changes the payload it received, in place, and forwards it (two
hops at most): compiled code writes the event's own bytes.
"""

import numpy as np
from gymnasium import spaces

from seer_env import NumbaModel
from seer_env import handler_api as api

PAYLOAD = np.dtype([("hops", "<u8"), ("weight", "<f8"), ("tag", "<u4"), ("pad", "<u4")])
HOP = 0


class PayloadRing(NumbaModel):
    """Each agent sends a payload to its right neighbour, which adds it up."""

    state_dtype = np.dtype([("hops", "<u8"), ("weight", "<f8"), ("tags", "<u8")])
    public_dtype = np.dtype([("hops", "<u8")])
    payload_dtype = PAYLOAD
    params_dtype = np.dtype([("by_array", "<i8"), ("forward", "<i8")])
    event_kinds = ("HOP",)

    def __init__(self, n=4, by_array=0, forward=0, compiled=True):
        super().__init__(compiled=compiled)
        self.num_entities = self.num_agents = n
        self.lookahead, self.dt = 0.5, 1.0
        self.observation_space = spaces.Box(0, np.inf, (2,), np.float32)
        self.action_space = spaces.Discrete(3)
        self.params_record = self.make_params(by_array=by_array, forward=forward)

    @staticmethod
    def on_action(ctx, state, snapshot, params, action):
        target = (api.self_id(ctx) + np.uint32(1)) % api.num_entities(ctx)
        at = api.now(ctx) + api.lookahead(ctx)
        weight = api.uniform(ctx)
        for i in range(action):
            if params["by_array"]:
                payload = np.zeros(1, PAYLOAD)
                payload[0]["hops"] = np.uint64(i + 1)
                payload[0]["weight"] = weight
                payload[0]["tag"] = np.uint32(7)
                api.schedule(ctx, target, at, HOP, payload)
            else:
                api.schedule_values(
                    ctx, target, at, HOP, PAYLOAD, np.uint64(i + 1), weight, np.uint32(7)
                )

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        state["hops"] += payload["hops"]
        state["weight"] += payload["weight"]
        state["tags"] += np.uint64(payload["tag"]) + np.uint64(payload["pad"])
        if params["forward"] and payload["pad"] < 2:
            payload["pad"] += np.uint32(1)
            payload["weight"] *= 0.5
            target = (api.self_id(ctx) + np.uint32(1)) % api.num_entities(ctx)
            api.schedule(ctx, target, api.now(ctx) + api.lookahead(ctx), HOP, payload)

    @staticmethod
    def write_snapshot(state, public, params):
        public["hops"] = state["hops"]

    @staticmethod
    def observe(agent, state, snapshot, params, out):
        out[0] = state["hops"]
        out[1] = state["weight"]

    @staticmethod
    def reward(agent, state, snapshot, params):
        return np.float64(state["tags"])
