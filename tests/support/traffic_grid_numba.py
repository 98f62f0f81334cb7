"""A signalised traffic grid as a NumbaModel: the twin of the C++ test model ``traffic_grid``.

The third model of the NumbaModel speed figures (docs/custom-models.md,
"Speed"; PCS and HeatRing are the others): ``width x height``
intersections on a torus, each an agent with four approach queues and a
two-phase signal (action 0: north-south green, 1: east-west green). Each
approach is served by its own periodic self-event (SERVE, every
``serve_interval``); on green, with a car waiting, one car crosses, turns
(straight, left or right, uniformly) and joins the neighbour's approach
``travel_time`` later (ARRIVE; the lookahead). Most SERVEs find nothing to do,
so a step is mostly the runtime's path for a handler of a few instructions.
``cpp/tests/models/traffic/traffic_grid.cpp`` is the same model in C++, bit
for bit (tests/models/test_traffic_grid.py).
"""

import numpy as np
from gymnasium import spaces

import seer_env
from seer_env import handler_api as api

SERVE, ARRIVE = 0, 1
PAYLOAD = np.dtype([("approach", "<u4"), ("pad", "<u4")])
# Straight on leaves by the side opposite the approach; left and right by the others.
TURN = np.array([2, 1, 3], np.uint32)


@seer_env.kernel
def neighbour(cell, side, params):
    """The intersection beyond ``side`` (0 north, 1 east, 2 south, 3 west) of ``cell``."""
    width, height = np.uint32(params["width"]), np.uint32(params["height"])
    x, y = cell % width, cell // width
    if side == 0:
        y = (y + height - np.uint32(1)) % height
    elif side == 1:
        x = (x + np.uint32(1)) % width
    elif side == 2:
        y = (y + np.uint32(1)) % height
    else:
        x = (x + width - np.uint32(1)) % width
    return y * width + x


@seer_env.kernel
def queued(state):
    """Cars waiting at the intersection (the snapshot's ``queued``)."""
    return state["queue"][0] + state["queue"][1] + state["queue"][2] + state["queue"][3]


class TrafficGridNumba(seer_env.NumbaModel):
    """Intersections on a torus passing cars (``traffic_grid``, as a NumbaModel)."""

    state_dtype = np.dtype(
        [
            ("queue", "<u4", (4,)),  # by approach: from the north, east, south, west
            ("phase", "<u4"),
            ("pad", "<u4"),
            ("served_step", "<u8"),
            ("arrived_step", "<u8"),
            ("served_total", "<u8"),
            ("arrived_total", "<u8"),
        ]
    )
    public_dtype = np.dtype([("queued", "<u4"), ("pad", "<u4")])
    payload_dtype = PAYLOAD
    params_dtype = np.dtype(
        [("width", "<u8"), ("height", "<u8"), ("cars", "<u4"), ("pad", "<u4"),
         ("serve_interval", "<f8")]
    )  # fmt: skip
    event_kinds = ("SERVE", "ARRIVE")
    info_keys = ("served", "arrived")
    total_keys = ("served", "arrived")
    name = "traffic_grid"
    agent_prefix = "intersection"
    params = (
        {"name": "width", "type": "int", "default": 8, "low": 1, "high": 4096,
         "doc": "intersections along x (a torus)"},
        {"name": "height", "type": "int", "default": 8, "low": 1, "high": 4096,
         "doc": "intersections along y (a torus)"},
        {"name": "cars_per_approach", "type": "int", "default": 4, "low": 0, "high": 1 << 16,
         "doc": "cars queued at each approach at reset"},
        {"name": "serve_interval", "type": "real", "default": 0.5, "low": 0.0, "high": 1e9,
         "low_open": True, "high_is_cap": True,
         "doc": "time between two services of an approach"},
        {"name": "travel_time", "type": "real", "default": 1.0, "low": 0.0, "high": 1e9,
         "low_open": True, "high_is_cap": True,
         "doc": "time a car takes to the next intersection (the lookahead)"},
        {"name": "step_time", "type": "real", "default": 5.0, "low": 0.0, "high": 1e9,
         "low_open": True, "high_is_cap": True, "doc": "simulated time per step"},
    )  # fmt: skip

    def __init__(
        self,
        width=8,
        height=8,
        cars_per_approach=4,
        serve_interval=0.5,
        travel_time=1.0,
        step_time=5.0,
        compiled=True,
    ):
        super().__init__(compiled=compiled)
        self.num_entities = self.num_agents = width * height
        self.lookahead, self.dt = float(travel_time), float(step_time)
        high = np.full(9, np.inf, np.float32)
        high[4] = 1.0  # the phase
        self.observation_space = spaces.Box(0.0, high, (9,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.state_space = spaces.Box(0.0, np.inf, (self.num_entities,), np.float32)
        self.params_record = self.make_params(
            width=width, height=height, cars=cars_per_approach, serve_interval=serve_interval
        )

    @staticmethod
    def on_init(ctx, state, snapshot, params):
        for approach in range(4):
            state["queue"][approach] = params["cars"]
            api.schedule_values(
                ctx, api.self_id(ctx), params["serve_interval"], SERVE, PAYLOAD, approach
            )

    @staticmethod
    def on_step_begin(ctx, state, snapshot, params):
        state["served_step"] = 0
        state["arrived_step"] = 0

    @staticmethod
    def on_action(ctx, state, snapshot, params, action):
        state["phase"] = action

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        approach = payload["approach"]
        if kind == SERVE:
            if approach % np.uint32(2) == state["phase"] and state["queue"][approach] > 0:
                state["queue"][approach] -= np.uint32(1)
                state["served_step"] += np.uint64(1)
                state["served_total"] += np.uint64(1)
                side = (approach + TURN[api.below(ctx, 3)]) % np.uint32(4)
                target = neighbour(api.self_id(ctx), side, params)
                api.schedule_values(
                    ctx, target, api.now(ctx) + api.lookahead(ctx), ARRIVE, PAYLOAD,
                    (side + np.uint32(2)) % np.uint32(4),
                )  # fmt: skip
            api.schedule_values(
                ctx, api.self_id(ctx), api.now(ctx) + params["serve_interval"], SERVE, PAYLOAD,
                approach,
            )  # fmt: skip
        else:
            state["queue"][approach] += np.uint32(1)
            state["arrived_step"] += np.uint64(1)
            state["arrived_total"] += np.uint64(1)

    @staticmethod
    def write_snapshot(state, public, params):
        public["queued"] = queued(state)

    @staticmethod
    def observe(agent, state, snapshot, params, out):
        for i in range(4):
            out[i] = state["queue"][i]
        out[4] = state["phase"]
        for side in range(4):
            out[5 + side] = snapshot[neighbour(agent, side, params)]["queued"]

    @staticmethod
    def reward(agent, state, snapshot, params):
        return -np.float64(queued(state))

    @staticmethod
    def info(agent, state, snapshot, params, out):
        out[0] = state["served_step"]
        out[1] = state["arrived_step"]

    @staticmethod
    def global_state(states, snapshot, params, out):
        for e in range(states.shape[0]):
            out[e] = queued(states[e])

    @staticmethod
    def totals(states, params, out):
        out[0] = 0
        out[1] = 0
        for e in range(states.shape[0]):
            out[0] += states[e]["served_total"]
            out[1] += states[e]["arrived_total"]
