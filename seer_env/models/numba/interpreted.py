"""Interpreted mode: a ``NumbaModel``'s handlers run as Python, through a ``PythonModel``.

Serial only, with ``print`` and a debugger; the random draws and scheduling go
through the same runtime (``handler_api`` over the handler context), so the
outputs are byte-identical to compiled mode.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from seer_env.handler_api import InterpretedContext
from seer_env.models.python_model import PythonModel


class NumbaModelLike(Protocol):
    """What interpreted mode reads of a ``NumbaModel`` (``model.py``, which imports this)."""

    num_entities: int
    num_agents: int
    lookahead: float
    dt: float
    observation_space: Any
    action_space: Any
    state_space: Any

    @classmethod
    def _records(cls) -> dict[str, np.dtype]: ...

    @classmethod
    def _hooks(cls) -> dict[str, Any]: ...

    def _params_bytes(self) -> bytes: ...


_INTERPRETED: dict[type, type] = {}


def interpreted_class(cls: type) -> type:
    """The ``PythonModel`` subclass that runs ``cls``'s handlers as Python."""
    if cls not in _INTERPRETED:
        records = cls._records()
        attrs = {
            "state_dtype": records["state"],
            "payload_dtype": records["payload"],
            "event_kinds": tuple(cls.event_kinds),
            "info_keys": tuple(cls.info_keys),
            "total_keys": tuple(cls.total_keys),
            "agent_prefix": cls.agent_prefix,
            "name": cls.name or cls.__name__,
            "params": tuple(cls.params),
            "space_docs": dict(cls.space_docs),
            "decisions": bool(cls.decisions),
            "__doc__": cls.__doc__,
        }
        _INTERPRETED[cls] = type(f"{cls.__name__}Interpreted", (_InterpretedModel,), attrs)
    return _INTERPRETED[cls]


class _InterpretedModel(PythonModel):
    """A ``NumbaModel`` run as a ``PythonModel``: the same handlers, as Python."""

    def __init__(self, model: NumbaModelLike) -> None:
        super().__init__()
        self.model = model
        self.num_entities, self.num_agents = model.num_entities, model.num_agents
        self.lookahead, self.dt = model.lookahead, model.dt
        self.observation_space = model.observation_space
        self.action_space = model.action_space
        self.state_space = model.state_space
        records = type(model)._records()
        self._public_dtype = records["public"]
        self._payload_dtype = records["payload"]
        params = np.frombuffer(bytearray(model._params_bytes()), records["params"])
        params.flags.writeable = False
        self._params = params[0]
        self._hooks = type(model)._hooks()

    def _runtime_layout(self) -> dict:
        layout = super()._runtime_layout()
        layout["public_dtype"] = self._public_dtype
        layout["public_fields"] = []
        return layout

    def _write_snapshot_hook(self):
        write_snapshot, params = self._hooks["write_snapshot"], self._params
        return lambda state, public: write_snapshot(state, public, params)

    def _context(self, ctx, source=None):
        return InterpretedContext(ctx, ctx.self if source is None else source, self)

    def reset(self, states):
        if "reset" in self._hooks:
            self._hooks["reset"](states, self._params)

    def on_init(self, ctx, state):
        if "on_init" in self._hooks:
            self._hooks["on_init"](self._context(ctx), state, ctx.snapshot, self._params)

    def on_step_begin(self, ctx, state):
        if "on_step_begin" in self._hooks:
            self._hooks["on_step_begin"](self._context(ctx), state, ctx.snapshot, self._params)

    def on_action(self, ctx, state, action):
        self._hooks["on_action"](self._context(ctx), state, ctx.snapshot, self._params, action)

    def on_event(self, ctx, state, event):
        payload = np.zeros(1, self._payload_dtype)
        payload[0] = event.payload
        self._hooks["on_event"](
            self._context(ctx, event.source),
            state,
            ctx.snapshot,
            self._params,
            event.kind,
            payload[0],
        )

    def observe(self, agent, state, snapshot):
        out = np.zeros(self.observation_space.shape[0], np.float32)
        self._hooks["observe"](agent, state, snapshot, self._params, out)
        return out

    def reward(self, agent, state, snapshot):
        return float(self._hooks["reward"](agent, state, snapshot, self._params))

    def terminated(self, agent, state, snapshot):
        hook = self._hooks.get("terminated")
        return bool(hook(agent, state, snapshot, self._params)) if hook else False

    def truncated(self, agent, state, snapshot):
        hook = self._hooks.get("truncated")
        return bool(hook(agent, state, snapshot, self._params)) if hook else False

    def info(self, agent, state, snapshot):
        out = np.zeros(len(self.info_keys), np.int64)
        if "info" in self._hooks:
            self._hooks["info"](agent, state, snapshot, self._params, out)
        return out.tolist()

    def global_state(self, states, snapshot):
        out = np.zeros(0 if self.state_space is None else self.state_space.shape[0], np.float32)
        if "global_state" in self._hooks:
            self._hooks["global_state"](states, snapshot, self._params, out)
        return out

    def totals(self, states):
        out = np.zeros(len(self.total_keys), np.int64)
        if "totals" in self._hooks:
            self._hooks["totals"](states, self._params, out)
        return out.tolist()
