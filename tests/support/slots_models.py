"""Models whose agents' valid actions vary (action masks), for the tests.

``Slots`` is the PythonModel twin of the C++ test model ``slots``
(cpp/tests/models/slots): each agent holds ``slots`` slots, each free or
taken; action 0 waits (always valid), action ``1 + s`` takes slot ``s``, valid
only while it is free. A taken slot frees itself after an exponential hold (a
RELEASE self-event); taking one PINGs the next agent at ``now + lookahead``.
``on_init`` takes each slot with probability 1/2. Its state record adds
``busy`` (slots taken), the snapshot field the C++ model computes; the
observations, rewards and masks are the C++ model's, bit for bit.

``SlotsAsking`` is ``Slots`` with event-driven decisions: an agent asks at its
own ASK events (the C++ ``slots_asking``).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from seer_env import PythonModel

RELEASE, PING, ASK = 0, 1, 2


def first_valid(agent: str, observation, space) -> int:
    """A policy for decision envs: the lowest valid action that takes a slot, else 0."""
    valid = np.flatnonzero(observation["action_mask"])
    return int(valid[1] if len(valid) > 1 else valid[0])


class Slots(PythonModel):
    """Agents take free slots; only free slots are valid actions (PythonModel)."""

    state_dtype = np.dtype(
        [("taken", "<u4"), ("busy", "<u4"), ("pings", "<u8"), ("claims", "<u8"), ("asked", "<u8")]
    )
    public_fields = ("busy",)
    payload_dtype = np.dtype([("slot", "<u4"), ("pad", "<u4")])
    event_kinds = ("RELEASE", "PING", "ASK")
    action_mask = True

    def __init__(
        self, agents: int = 6, slots: int = 3, hold: float = 1.5, lookahead: float = 0.5
    ) -> None:
        super().__init__()
        self.num_entities = self.num_agents = agents
        self.slots = slots
        self.hold = hold
        self.lookahead = lookahead
        self.dt = 1.0
        self.observation_space = spaces.Box(0, 1e9, (slots + 2,), np.float32)
        self.action_space = spaces.Discrete(slots + 1)

    def _take(self, ctx, state, slot: int) -> None:
        state["taken"] |= 1 << slot
        state["busy"] += 1
        payload = np.zeros((), self.payload_dtype)
        payload["slot"] = slot
        ctx.schedule(ctx.self, ctx.now + ctx.rng.exponential(self.hold), RELEASE, payload)

    def on_init(self, ctx, state) -> None:
        for slot in range(self.slots):
            if ctx.rng.uniform() < 0.5:
                self._take(ctx, state, slot)
        if type(self).decisions:
            ctx.schedule(ctx.self, ctx.rng.exponential(0.3), ASK)

    def on_action(self, ctx, state, action) -> None:
        action = int(action)
        if action > 0:
            self._take(ctx, state, action - 1)
            state["claims"] += 1
            ctx.schedule((ctx.self + 1) % self.num_entities, ctx.now + self.lookahead, PING)
        if type(self).decisions:
            ctx.schedule(ctx.self, ctx.now + 0.1 * (action + 1), ASK)

    def on_event(self, ctx, state, event) -> None:
        if event.kind == RELEASE:
            state["taken"] &= ~(1 << int(event.payload["slot"])) & 0xFFFFFFFF
            state["busy"] -= 1
        elif event.kind == PING:
            state["pings"] += 1
        else:
            state["asked"] += 1
            ctx.request_decision()

    def observe(self, agent, state, snapshot):
        bits = [(int(state["taken"]) >> s) & 1 for s in range(self.slots)]
        neighbour = snapshot[(agent + 1) % self.num_entities]["busy"]
        return np.array([*bits, state["pings"], neighbour], np.float32)

    def reward(self, agent, state, snapshot) -> float:
        return float(state["busy"])

    def valid_actions(self, agent, state, snapshot):
        taken = int(state["taken"])
        return [True] + [not (taken >> s) & 1 for s in range(self.slots)]


class SlotsAsking(Slots):
    """``Slots`` whose agents ask for actions at their own ASK events (decisions)."""

    decisions = True
