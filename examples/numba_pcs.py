"""PCS (the ``pcs`` model of ``cpp/models/pcs``) as a ``seer_env.NumbaModel``.

The same cells, phones, random draws and outputs as the C++ model, written in
Python: compiled by numba it runs on the runtime's worker threads; with
``compiled=False`` it runs as a ``PythonModel``. All three are byte-identical
(``tests/models/test_numba_model.py``): observations, rewards, infos, ``state()``,
totals, and the runtime digest (the records below are ``PcsState``,
``PcsPublic`` and ``PcsPhone`` byte for byte). See ``cpp/models/pcs/pcs.hpp``
for the model itself; the handlers below follow ``pcs.cpp`` line for line.

    env = seer_env.SeerParallelEnv(NumbaPcs, {"width": 64, "height": 64}, num_threads=2)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from seer_env import handler_api as api
from seer_env.models.numba import NumbaModel, kernel
from seer_env.models.python_model import declared_config
from seer_env.workloads import workload_spec

NEXT_CALL, CALL_END, HANDOFF_OUT, HANDOFF_IN = 0, 1, 2, 3
NO_CHANNEL = 0xFFFFFFFF
OBS_DIM = 10
ONE = np.uint64(1)
# pcs.cpp's kMaxMeanDraws and kMaxLoopDraws: validation bounds the mean number
# of draws of the two loops (moves of an idle phone, busy lines of a call);
# the cap stops a loop the clock can no longer advance, so no handler hangs.
MAX_MEAN_DRAWS = 1e4
MAX_LOOP_DRAWS = 1 << 22

# The records of pcs.hpp (PcsCounters, PcsState, PcsPublic, PcsPhone), field for field.
COUNTERS = np.dtype(
    [
        ("call_attempts", "<u8"),  # NEXT_CALL events plus busy lines
        ("blocks", "<u8"),  # new calls refused
        ("busy_lines", "<u8"),  # attempts inside the phone's own call
        ("handoffs_in", "<u8"),  # HANDOFF_IN arrivals
        ("dropped_handoffs", "<u8"),  # arrivals with no free channel
        ("events", "<u8"),  # events handled
    ]
)
STATE = np.dtype(
    [
        ("channel_mask", "<u8"),  # bit c set: channel c is in use
        ("guard", "<u4"),  # guard channels in effect this step
        ("clock", "<u4"),  # pcs_v1's step counter; always 0 in this (v0) port
        ("step", COUNTERS),  # cleared at each step start
        ("total", COUNTERS),  # since reset
    ]
)
PUBLIC = np.dtype([("busy", "<u4"), ("pad", "<u4")])
PHONE = np.dtype(
    [
        ("next_call", "<f8"),
        ("call_end", "<f8"),  # +inf when idle
        ("next_move", "<f8"),
        ("id", "<u4"),
        ("channel", "<u4"),  # channel held in the current cell, or NO_CHANNEL
    ]
)
PARAMS = np.dtype(
    [
        ("width", "<i8"),
        ("height", "<i8"),
        ("channels", "<i8"),
        ("phones_per_cell", "<i8"),
        ("call_interval", "<f8"),
        ("call_duration", "<f8"),
        ("move_interval", "<f8"),
        ("handoff_delay", "<f8"),
        ("handoff_weight", "<f8"),
        ("count_scale", "<f8"),  # 1 / expected call attempts per cell per step
    ]
)


@kernel
def earliest_cross_time(now, lookahead):
    """``now + lookahead``, or the next time after ``now`` where the clock cannot tell them apart.

    As ``Context::earliest_cross_time`` in C++: a handoff never breaks the contract, whatever
    the lookahead (``1e-300``) or the clock.
    """
    t = now + lookahead
    return t if t > now else np.nextafter(now, math.inf)


@kernel
def neighbour(cell, direction, params):
    """Cell next to ``cell`` in ``direction`` (0 x-1, 1 x+1, 2 y-1, 3 y+1) on the torus."""
    width, height = params["width"], params["height"]
    x = np.int64(cell) % width
    y = np.int64(cell) // width
    if direction == 0:
        x = (x + width - 1) % width
    elif direction == 1:
        x = (x + 1) % width
    elif direction == 2:
        y = (y + height - 1) % height
    else:
        y = (y + 1) % height
    return y * width + x


@kernel
def free_channels(state, params):
    """Channels not in use."""
    return params["channels"] - api.popcount(state["channel_mask"])


@kernel
def take_channel(state, phone):
    """Lowest free channel: deterministic, and what the C++ model does."""
    channel = api.lowest_zero_bit(state["channel_mask"])
    phone["channel"] = channel
    state["channel_mask"] = state["channel_mask"] | (np.uint64(1) << np.uint64(channel))


@kernel
def release_channel(state, phone, params):
    """Frees the phone's channel (it must hold it)."""
    channel = np.int64(phone["channel"])
    if channel >= params["channels"]:
        raise ValueError("a phone releases a channel it does not hold")
    if (state["channel_mask"] >> np.uint64(channel)) & np.uint64(1) == np.uint64(0):
        raise ValueError("a phone releases a channel it does not hold")
    state["channel_mask"] = state["channel_mask"] & ~(np.uint64(1) << np.uint64(channel))
    phone["channel"] = NO_CHANNEL


@kernel
def schedule_idle(ctx, phone, params):
    """Walks an idle phone and sends its NEXT_CALL where it ends up."""
    me = np.int64(api.self_id(ctx))
    now = api.now(ctx)
    cell = me
    draws = 0
    while True:
        while phone["next_move"] < phone["next_call"]:
            draws += 1
            if draws > MAX_LOOP_DRAWS:
                raise ValueError(
                    "pcs: a phone drew more than 4194304 moves in one handler: "
                    "the clock no longer resolves the configured mean intervals"
                )
            cell = neighbour(cell, api.below(ctx, 4), params)
            phone["next_move"] += api.exponential(ctx, params["move_interval"])
        # The deviation (pcs.hpp): nothing reaches another cell before now + L,
        # nothing reaches this one before now.
        earliest = now if cell == me else earliest_cross_time(now, params["handoff_delay"])
        if phone["next_call"] >= earliest:
            break
        phone["next_call"] = earliest
    api.schedule(ctx, cell, phone["next_call"], NEXT_CALL, phone)


@kernel
def start_phone(ctx, phones, phone_id, params):
    """Phone ``phone_id`` at reset, in ``phones[0]``: first call and move times, first event.

    ``phones`` is an argument, so it stays alive while its record is scheduled.
    """
    phone = phones[0]
    phone["id"] = phone_id
    phone["channel"] = NO_CHANNEL
    phone["call_end"] = math.inf
    phone["next_call"] = api.now(ctx) + api.exponential(ctx, params["call_interval"])
    phone["next_move"] = api.now(ctx) + api.exponential(ctx, params["move_interval"])
    schedule_idle(ctx, phone, params)


@kernel
def schedule_in_call(ctx, phone):
    """Schedules the first of call end and next move of a phone in a call."""
    if phone["next_move"] < phone["call_end"]:
        api.schedule(ctx, api.self_id(ctx), phone["next_move"], HANDOFF_OUT, phone)
    else:
        api.schedule(ctx, api.self_id(ctx), phone["call_end"], CALL_END, phone)


@kernel
def write_counters(counters, out):
    """The six counters as int64, in ``info_keys`` order."""
    out[0] = np.int64(counters["call_attempts"])
    out[1] = np.int64(counters["blocks"])
    out[2] = np.int64(counters["busy_lines"])
    out[3] = np.int64(counters["handoffs_in"])
    out[4] = np.int64(counters["dropped_handoffs"])
    out[5] = np.int64(counters["events"])


@kernel
def busy_fraction(busy, params):
    """``busy`` channels as a fraction of all."""
    return np.float64(busy) / np.float64(params["channels"])


def require_mean_ratio(small: str, small_value: float, large: str, large_value: float) -> None:
    """pcs.cpp's check, word for word: one handler draws ``large / small`` times on average."""
    if large_value / small_value > MAX_MEAN_DRAWS:
        raise ValueError(
            f"{small} must be >= {large} / 1e4 (one handler draws {large} / {small} times on "
            f"average), got {small}={small_value:f}, {large}={large_value:f}"
        )


class NumbaPcs(NumbaModel):
    """PCS wireless cells (``pcs_v0``), compiled by numba or interpreted.

    Args: the parameters of the C++ ``pcs`` model, by keyword (``params``: its
    declaration, so the same defaults and ranges), and ``compiled`` (see
    ``NumbaModel``).
    """

    state_dtype = STATE
    public_dtype = PUBLIC
    payload_dtype = PHONE
    params_dtype = PARAMS
    event_kinds = ("NEXT_CALL", "CALL_END", "HANDOFF_OUT", "HANDOFF_IN")
    info_keys = (
        "call_attempts",
        "blocks",
        "busy_lines",
        "handoffs_in",
        "dropped_handoffs",
        "events",
    )
    total_keys = ("call_attempts", "blocks", "busy_lines", "handoffs", "dropped_handoffs", "events")
    agent_prefix = "cell"
    name = "numba_pcs"

    # The C++ model's parameter table, as declared (cpp/models/pcs/workload.cpp).
    params = tuple(workload_spec("pcs")["params"])
    space_docs = {
        "observation": {"shape": "(10,)", "dtype": "float32", "bounds": "[0, 1] and [0, inf)"},
        "action": {"shape": "Discrete(channels + 1)", "dtype": "int64", "bounds": "guards"},
        "state": {"shape": "(2 * width * height,)", "dtype": "float32", "bounds": "[0, 1]"},
    }

    def __init__(self, *, compiled: bool = True, **config: Any) -> None:
        super().__init__(compiled=compiled)
        c = declared_config(self.workload_spec(), config)
        # What the C++ reader checks beyond the table: its caps, and the total.
        for p in self.params:
            if p.get("high_is_cap") and c[p["name"]] > p["high"]:
                raise ValueError(f"{p['name']} must be <= {p['high']!r}, got {c[p['name']]!r}")
        require_mean_ratio("move_interval", c["move_interval"], "call_interval", c["call_interval"])
        require_mean_ratio("move_interval", c["move_interval"], "handoff_delay", c["handoff_delay"])
        require_mean_ratio("call_interval", c["call_interval"], "call_duration", c["call_duration"])
        cells = c["width"] * c["height"]
        if cells * c["phones_per_cell"] > 1e8:
            raise ValueError(
                "phones_per_cell * width * height must be <= 1e8 (pending events), got "
                f"{cells * c['phones_per_cell']}"
            )
        self.num_entities = self.num_agents = cells
        self.lookahead = c["handoff_delay"]
        self.dt = c["step_minutes"]
        inf = np.float32(np.inf)
        high = np.array([1, 1, inf, inf, inf, inf, 1, 1, 1, 1], dtype=np.float32)
        self.observation_space = spaces.Box(np.zeros(OBS_DIM, np.float32), high, dtype=np.float32)
        self.action_space = spaces.Discrete(c["channels"] + 1)
        self.state_space = spaces.Box(0.0, 1.0, (2 * cells,), dtype=np.float32)
        self.params_record = self.make_params(
            **{k: c[k] for k in ("width", "height", "channels", "phones_per_cell")},
            **{k: c[k] for k in ("call_interval", "call_duration", "move_interval")},
            handoff_delay=c["handoff_delay"],
            handoff_weight=c["handoff_weight"],
            count_scale=c["call_interval"] / (float(c["phones_per_cell"]) * c["step_minutes"]),
        )

    # -- handlers ---------------------------------------------------------------------------
    @staticmethod
    def on_init(ctx, state, snapshot, params):
        """Each phone of the cell: first call and move times, then its first event."""
        # One array, passed whole: a record taken from a temporary array
        # (np.zeros(1, PHONE)[0]) would outlive the array in compiled code.
        phones = np.zeros(1, PHONE)
        me = np.int64(api.self_id(ctx))
        for i in range(params["phones_per_cell"]):
            start_phone(ctx, phones, me * params["phones_per_cell"] + i, params)

    @staticmethod
    def on_step_begin(ctx, state, snapshot, params):
        """Clears this step's counters."""
        step = state["step"]
        step["call_attempts"] = 0
        step["blocks"] = 0
        step["busy_lines"] = 0
        step["handoffs_in"] = 0
        step["dropped_handoffs"] = 0
        step["events"] = 0

    @staticmethod
    def on_action(ctx, state, snapshot, params, action):
        """The guard channels for this step."""
        if action < 0 or action > params["channels"]:
            raise ValueError("guard channels out of range")
        state["guard"] = action

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, phone):
        """One phone event (pcs.hpp: NEXT_CALL, CALL_END, HANDOFF_OUT, HANDOFF_IN)."""
        now = api.now(ctx)
        step, total = state["step"], state["total"]  # counted in both
        step["events"] += ONE
        total["events"] += ONE
        if kind == NEXT_CALL:
            step["call_attempts"] += ONE
            total["call_attempts"] += ONE
            if free_channels(state, params) <= state["guard"]:
                step["blocks"] += ONE
                total["blocks"] += ONE
                phone["next_call"] = now + api.exponential(ctx, params["call_interval"])
                schedule_idle(ctx, phone, params)
                return
            take_channel(state, phone)
            phone["call_end"] = now + api.exponential(ctx, params["call_duration"])
            phone["next_call"] = now + api.exponential(ctx, params["call_interval"])
            draws = 0
            while phone["next_call"] < phone["call_end"]:
                draws += 1
                if draws > MAX_LOOP_DRAWS:
                    raise ValueError(
                        "pcs: a phone drew more than 4194304 busy lines in one handler: "
                        "the clock no longer resolves the configured mean intervals"
                    )
                step["busy_lines"] += ONE
                total["busy_lines"] += ONE
                step["call_attempts"] += ONE
                total["call_attempts"] += ONE
                phone["next_call"] += api.exponential(ctx, params["call_interval"])
            schedule_in_call(ctx, phone)
        elif kind == CALL_END:
            release_channel(state, phone, params)
            phone["call_end"] = math.inf
            schedule_idle(ctx, phone, params)
        elif kind == HANDOFF_OUT:
            release_channel(state, phone, params)
            target = neighbour(api.self_id(ctx), api.below(ctx, 4), params)
            api.schedule(
                ctx, target, earliest_cross_time(now, params["handoff_delay"]), HANDOFF_IN, phone
            )
        elif kind == HANDOFF_IN:
            step["handoffs_in"] += ONE
            total["handoffs_in"] += ONE
            phone["next_move"] = now + api.exponential(ctx, params["move_interval"])
            if free_channels(state, params) == 0:
                step["dropped_handoffs"] += ONE
                total["dropped_handoffs"] += ONE
                phone["call_end"] = math.inf
                schedule_idle(ctx, phone, params)
                return
            take_channel(state, phone)
            if phone["call_end"] < now:
                phone["call_end"] = now  # ended in transit (pcs.hpp)
            schedule_in_call(ctx, phone)
        else:
            raise ValueError("unknown event kind")

    # -- boundary ---------------------------------------------------------------------------
    @staticmethod
    def write_snapshot(state, public, params):
        """Busy channels, for the neighbours' observations."""
        public["busy"] = api.popcount(state["channel_mask"])
        public["pad"] = 0

    @staticmethod
    def observe(agent, state, snapshot, params, out):
        """Own busy and guard fractions, four scaled counters, neighbours' busy fractions."""
        scale, step = params["count_scale"], state["step"]
        out[0] = busy_fraction(api.popcount(state["channel_mask"]), params)
        out[1] = np.float64(state["guard"]) / np.float64(params["channels"])
        out[2] = np.float64(step["call_attempts"]) * scale
        out[3] = np.float64(step["blocks"]) * scale
        out[4] = np.float64(step["handoffs_in"]) * scale
        out[5] = np.float64(step["dropped_handoffs"]) * scale
        for d in range(4):
            out[6 + d] = busy_fraction(snapshot[neighbour(agent, d, params)]["busy"], params)

    @staticmethod
    def reward(agent, state, snapshot, params):
        """Minus blocked calls and weighted dropped handoffs of the step."""
        step = state["step"]
        return 0.0 - (
            np.float64(step["blocks"])
            + params["handoff_weight"] * np.float64(step["dropped_handoffs"])
        )

    @staticmethod
    def info(agent, state, snapshot, params, out):
        """This step's counters."""
        write_counters(state["step"], out)

    @staticmethod
    def global_state(states, snapshot, params, out):
        """Busy and guard fractions of every cell, interleaved."""
        for e in range(states.shape[0]):
            out[2 * e] = busy_fraction(api.popcount(states[e]["channel_mask"]), params)
            out[2 * e + 1] = np.float64(states[e]["guard"]) / np.float64(params["channels"])

    @staticmethod
    def totals(states, params, out):
        """Counters since reset, summed in cell order."""
        out[:] = 0
        cell = np.zeros(6, np.int64)
        for e in range(states.shape[0]):
            write_counters(states[e]["total"], cell)
            out += cell
