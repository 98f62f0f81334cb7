"""Ring: a small PythonModel (tokens passed to the right neighbour) several test files use."""

import numpy as np
from gymnasium import spaces

import seer_env


class Ring(seer_env.PythonModel):
    """Agents pass tokens to their right neighbour; records what it drew."""

    state_dtype = np.dtype([("tokens", "<u8"), ("hops", "<u8"), ("draw", "<f8")])
    public_fields = ("tokens",)
    payload_dtype = np.dtype([("hops", "<u8")])
    event_kinds = ("TOKEN",)
    info_keys = ("tokens",)
    total_keys = ("tokens",)

    def __init__(self, num_entities=5, delay=0.5):
        super().__init__()
        self.num_entities = self.num_agents = int(num_entities)
        self.lookahead, self.dt, self.delay = 0.5, 1.0, float(delay)
        self.observation_space = spaces.Box(0, np.inf, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.state_space = spaces.Box(0, np.inf, (self.num_entities,), np.float32)

    def on_action(self, ctx, state, action):
        state["draw"] = ctx.rng.uniform()
        if action:
            ctx.schedule((ctx.self + 1) % self.num_entities, ctx.now + self.delay, 0, (1,))

    def on_event(self, ctx, state, event):
        state["tokens"] += 1
        state["hops"] += event.payload["hops"]

    def observe(self, agent, state, snapshot):
        return [state["tokens"], snapshot[(agent + 1) % self.num_entities]["tokens"]]

    def reward(self, agent, state, snapshot):
        return float(state["draw"])

    def info(self, agent, state, snapshot):
        return [int(state["tokens"])]

    def global_state(self, states, snapshot):
        return snapshot["tokens"].astype(np.float32)

    def totals(self, states):
        return [int(states["tokens"].sum())]


def ring_env(**kw):
    config = {k: kw.pop(k) for k in ("num_entities", "delay") if k in kw}
    return seer_env.SeerParallelEnv(Ring, config, **kw)


def all_send(env):
    return {a: 1 for a in env.agents}
