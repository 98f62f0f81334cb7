"""``seer_env.PythonModel``: write a model's handlers in Python to prototype it.

A Python model runs on the same runtime as a C++ model: the same serial event
order, the same per-entity Philox streams (``ctx.rng``), the same handler
context and the same contract checks (``ctx.schedule`` enforces the lookahead;
``check=True`` detects writes to other entities' states). Its handlers hold
the GIL, so it runs under the serial executor only; port it to C++ (see
``docs/custom-models.md``) to run it in parallel, and prove the port exact with
``seer_env.testing.assert_models_equivalent``.

Subclass it, declare the records as class attributes, set the sizes and
spaces in ``__init__`` (its keyword arguments are the model's config), and
write the hooks::

    class Ring(seer_env.PythonModel):
        state_dtype = np.dtype([("tokens", "<u8")])
        event_kinds = ("TOKEN",)

        def __init__(self, num_entities=8):
            super().__init__()
            self.num_entities = self.num_agents = num_entities
            self.lookahead, self.dt = 0.5, 1.0
            self.observation_space = spaces.Box(0, np.inf, (1,), np.float32)
            self.action_space = spaces.Discrete(2)

        def on_action(self, ctx, state, action):
            if action:
                ctx.schedule((ctx.self + 1) % self.num_entities, ctx.now + 0.5, 0)

        def on_event(self, ctx, state, event):
            state["tokens"] += 1

        def observe(self, agent, state, snapshot):
            return [state["tokens"]]

        def reward(self, agent, state, snapshot):
            return float(state["tokens"])

    env = seer_env.SeerParallelEnv(Ring, {"num_entities": 8})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from seer_env.models.declared import DeclaredModel
from seer_env.validation import validate_int, validate_real

__all__ = ["PythonModel"]

_PAYLOAD_BYTES = 64


def _packed_dtype(name: str, dtype: Any) -> np.dtype:
    """``dtype`` as a structured dtype without gaps or objects (ValueError otherwise)."""
    dtype = np.dtype(dtype)
    if dtype.names is None:
        raise ValueError(f"{name} must be a structured numpy dtype, got {dtype}")
    if dtype.hasobject:
        raise ValueError(f"{name} must hold plain numbers, not Python objects: {dtype}")
    # Gaps would be bytes no field writes; digests hash every byte.
    used = sum(dtype.fields[f][0].itemsize for f in dtype.names)
    if used != dtype.itemsize:
        raise ValueError(
            f"{name} must have no padding (fields use {used} of {dtype.itemsize} bytes): {dtype}"
        )
    return dtype


def _dtype_record(dtype: np.dtype) -> dict[str, Any]:
    """A structured dtype as the plain dict numpy.dtype() accepts (names, formats, ...)."""
    formats = []
    for name in dtype.names:
        field = dtype.fields[name][0]
        base = _dtype_record(field.base) if field.base.names else field.base.str
        formats.append((base, field.shape) if field.shape else base)
    return {
        "names": list(dtype.names),
        "formats": formats,
        "offsets": [dtype.fields[n][1] for n in dtype.names],
        "itemsize": dtype.itemsize,
    }


def _box_bounds(name: str, space: Any) -> tuple[int, list[float], list[float]]:
    if not isinstance(space, spaces.Box) or len(space.shape) != 1:
        raise ValueError(f"{name} must be a 1-D gymnasium.spaces.Box, got {space!r}")
    if space.dtype != np.float32:
        raise ValueError(f"{name} must have dtype float32, got {space.dtype}")
    return space.shape[0], space.low.tolist(), space.high.tolist()


def _scalar_bounds(name: str, space: spaces.Box) -> tuple[float, float]:
    low, high = np.unique(space.low), np.unique(space.high)
    if low.size != 1 or high.size != 1:
        raise ValueError(f"{name} must have the same low and high in every dimension")
    return float(low[0]), float(high[0])


def declared_config(spec: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` checked against the declared ``spec["params"]``, defaults filled in."""
    from seer_env.workloads import validate_params  # noqa: PLC0415 (workloads imports env)

    unknown = sorted(set(config) - {p["name"] for p in spec["params"]})
    if unknown:
        raise ValueError(f"unknown config key {unknown[0]!r} for model {spec['name']}")
    values = {p["name"]: config.get(p["name"], p["default"]) for p in spec["params"]}
    return validate_params(spec, values)


class PythonModel(DeclaredModel):
    """Base class of models whose handlers are Python methods.

    Class attributes (the records):
        state_dtype: per-entity state, a structured numpy dtype without padding.
            Zeroed at every reset, then ``reset(states)`` may fill it.
        public_fields: names of the state fields copied into the boundary
            snapshot, which handlers and observations read (default: all).
        payload_dtype: event payload record (<= 64 bytes), or None for raw bytes.
        event_kinds: names of event kinds, by kind id (used in error messages).
        info_keys: per-agent integer counters returned by ``info``.
        total_keys: env-wide integer counters returned by ``totals``.
        agent_prefix: agents are named ``f"{agent_prefix}_{i}"``.
        name: model name in messages (default: the class name).
        params: the declared parameters (the keyword arguments of ``__init__``),
            dicts with the keys of a C++ declaration's table rows: ``name``,
            ``type`` ("int" or "real"), ``default``, ``low``, ``high`` and
            optionally ``low_open``, ``high_is_cap``, ``doc``. Declared: the env
            validates the config against them and fills in the defaults.
        space_docs: ``{"observation"|"action"|"state": {"shape", "dtype",
            "bounds"}}`` as text for docs (optional).
        decisions: True when agents act as their handlers ask
            (``ctx.request_decision()``; ``on_action`` then runs at that time)
            instead of at every step: run it as ``seer_env.SeerDecisionEnv``.
        action_mask: True when which actions an agent may take varies (a
            Discrete action space only): ``valid_actions`` says which, the envs
            expose the mask (PettingZoo's ``{"observation", "action_mask"}``
            on the dict API, ``env.action_masks`` on the array paths) and
            refuse an action it forbids.

    ``workload_spec()`` returns the declaration with the structure of
    ``seer_env._core.workload_spec`` (docs/workloads-declaration.md).

    Instance attributes, set in ``__init__``:
        num_entities, num_agents (agents are entities ``0..num_agents-1``),
        lookahead (> 0, the least delay of cross-entity events), dt (> 0, the
        step length), observation_space (float32 1-D Box), action_space
        (Discrete, or float32 1-D Box with scalar bounds), state_space
        (float32 1-D Box with scalar bounds for ``env.state()``, or None).

    Handlers receive ``ctx`` (``now``, ``self``, ``rng``, ``snapshot``,
    ``schedule(target, time, kind, payload=None)``, ``request_decision()``) and
    ``state``, a writable
    record of the handler's own entity: the only state a handler may write.
    Boundary hooks receive read-only records and the read-only snapshot.
    """

    public_fields: ClassVar[Sequence[str] | None] = None  # the rest: DeclaredModel's

    @classmethod
    def workload_spec(cls) -> dict[str, Any]:
        """The model's declaration, with the structure of ``_core.workload_spec``."""
        params = []
        for p in cls.params:
            row = {"low_open": False, "high_is_cap": False, "doc": "", "default_doc": "", **p}
            if row["type"] not in ("int", "real"):
                raise ValueError(f"params[{row['name']!r}] type must be 'int' or 'real'")
            params.append(row)
        empty = {"shape": "", "dtype": "", "bounds": ""}
        records = {}
        if cls.state_dtype is not None:
            records["state"] = _dtype_record(_packed_dtype("state_dtype", cls.state_dtype))
        if cls.payload_dtype is not None:
            records["payload"] = _dtype_record(_packed_dtype("payload_dtype", cls.payload_dtype))
        return {
            "name": cls.name or cls.__name__,
            "summary": (cls.__doc__ or "").strip().split("\n")[0],
            "params": params,
            "spaces": {
                k: {**empty, **cls.space_docs.get(k, {})}
                for k in ("observation", "action", "state")
            },
            "info_keys": [str(k) for k in cls.info_keys],
            "total_keys": [str(k) for k in cls.total_keys],
            "event_kinds": [str(k) for k in cls.event_kinds],
            "records": records,
            "decisions": bool(cls.decisions),
            "action_mask": bool(cls.action_mask),
        }

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> PythonModel:
        """Build the model from a config: checked against ``params`` when declared."""
        if not cls.params:
            return cls(**config)
        return cls(**declared_config(cls.workload_spec(), config))

    # -- handlers (entity-local) -----------------------------------------------------------------
    def reset(self, states: np.ndarray) -> None:
        """Episode start (serial): ``states`` (every entity) arrive zeroed."""

    def on_init(self, ctx, state) -> None:
        """Initial events of entity ``ctx.self`` at time 0."""

    def on_step_begin(self, ctx, state) -> None:
        """Every entity at the start of each step, before actions."""

    def on_action(self, ctx, state, action) -> None:
        """Each live agent's action at the start of the step (int or float32 array)."""
        raise NotImplementedError(f"{type(self).__name__}.on_action")

    def on_event(self, ctx, state, event) -> None:
        """Handle ``event`` (``time``, ``kind``, ``source``, ``seq``, ``payload``)."""
        raise NotImplementedError(f"{type(self).__name__}.on_event")

    # -- boundary (read-only) --------------------------------------------------------------------
    def after_snapshot(self, snapshot: np.ndarray) -> None:
        """Build read-only structures derived from the whole snapshot."""

    def observe(self, agent: int, state, snapshot: np.ndarray):
        """The agent's observation: ``observation_space.shape[0]`` numbers."""
        raise NotImplementedError(f"{type(self).__name__}.observe")

    def valid_actions(self, agent: int, state, snapshot: np.ndarray) -> Sequence[bool]:
        """Which actions the agent may take now (``action_mask = True`` models only).

        One bool (or 0/1) per action of ``Discrete(n)``, True: valid. Called at
        every boundary, and with ``decisions`` when the agent asks; reads only
        the agent's own state and the snapshot, like ``observe``.
        """
        raise NotImplementedError(f"{type(self).__name__}.valid_actions")

    def reward(self, agent: int, state, snapshot: np.ndarray) -> float:
        """The agent's reward for the step just run."""
        raise NotImplementedError(f"{type(self).__name__}.reward")

    def terminated(self, agent: int, state, snapshot: np.ndarray) -> bool:
        """Whether the agent's episode ended (default: never)."""
        return False

    def truncated(self, agent: int, state, snapshot: np.ndarray) -> bool:
        """Whether the agent's episode was cut short (default: never)."""
        return False

    def info(self, agent: int, state, snapshot: np.ndarray) -> Sequence[int]:
        """One integer per ``info_keys``."""
        return ()

    def global_state(self, states: np.ndarray, snapshot: np.ndarray):
        """``env.state()``: ``state_space.shape[0]`` numbers."""
        return ()

    def totals(self, states: np.ndarray) -> Sequence[int]:
        """One integer per ``total_keys``, summed in entity order."""
        return ()

    # -- what the runtime reads ------------------------------------------------------------------
    def _runtime_layout(self) -> dict:
        """Spec and record layouts for the C++ trampoline (validated here)."""
        cls = type(self)
        if cls.state_dtype is None:
            raise ValueError(f"{cls.__name__}.state_dtype must be set (a structured dtype)")
        state = _packed_dtype("state_dtype", cls.state_dtype)
        names = list(state.names if cls.public_fields is None else cls.public_fields)
        unknown = [n for n in names if n not in state.names]
        if unknown:
            raise ValueError(f"public_fields must name fields of state_dtype, got {unknown}")
        public = np.dtype([(n, state.fields[n][0]) for n in names])
        copies, offset = [], 0
        for n in names:
            field, at = state.fields[n][:2]
            copies.append((at, offset, field.itemsize))
            offset += field.itemsize
        payload = None
        if cls.payload_dtype is not None:
            payload = _packed_dtype("payload_dtype", cls.payload_dtype)
            if payload.itemsize > _PAYLOAD_BYTES:
                raise ValueError(
                    f"payload_dtype must be at most {_PAYLOAD_BYTES} bytes, got {payload.itemsize}"
                )
        return {
            "spec": self._spec(),
            "state_dtype": state,
            "public_dtype": public,
            "public_fields": copies,
            "payload_dtype": payload,
            "write_snapshot": self._write_snapshot_hook(),
        }

    def _write_snapshot_hook(self):
        """``write_snapshot(state, public)`` filling a computed snapshot record, or None.

        None (the default) copies ``public_fields``; ``NumbaModel`` computes it.
        """
        return None

    def _spec(self) -> dict:
        # validate_int/validate_real: int(4.7) or float(True) would coerce silently.
        num_entities = validate_int("num_entities", self.num_entities, 1, 2**32 - 1)
        num_agents = validate_int("num_agents", self.num_agents, 0, num_entities)
        for key in ("lookahead", "dt"):
            validate_real(key, getattr(self, key), 0.0, low_open=True)
        if self.observation_space is None and num_agents == 0:
            self.observation_space = spaces.Box(0, 0, (0,), np.float32)
        obs_dim, obs_low, obs_high = _box_bounds("observation_space", self.observation_space)
        act = self.action_space if self.action_space is not None else spaces.Discrete(1)
        if isinstance(act, spaces.Discrete):
            if act.start != 0:
                raise ValueError(f"action_space must start at 0, got {act!r}")
            action = {"discrete": True, "n": int(act.n), "dim": 0, "low": 0.0, "high": 0.0}
        else:
            dim, _, _ = _box_bounds("action_space", act)
            low, high = _scalar_bounds("action_space", act)
            action = {"discrete": False, "n": 0, "dim": dim, "low": low, "high": high}
        masked = bool(type(self).action_mask)
        if masked and not action["discrete"]:
            raise ValueError(
                f"{type(self).__name__} declares action_mask = True with a Box action_space: "
                "an action mask needs a Discrete one"
            )
        if masked and type(self).valid_actions is PythonModel.valid_actions:
            raise ValueError(
                f"{type(self).__name__} declares action_mask = True but does not define "
                "valid_actions(agent, state, snapshot)"
            )
        state_dim, state_low, state_high = 0, 0.0, 0.0
        if self.state_space is not None:
            state_dim, _, _ = _box_bounds("state_space", self.state_space)
            state_low, state_high = _scalar_bounds("state_space", self.state_space)
        return {
            "name": type(self).name or type(self).__name__,
            "num_entities": num_entities,
            "num_agents": num_agents,
            "agent_prefix": str(type(self).agent_prefix),
            "lookahead": float(self.lookahead),
            "dt": float(self.dt),
            "obs_dim": obs_dim,
            "obs_low": obs_low,
            "obs_high": obs_high,
            "action": action,
            "state_dim": state_dim,
            "state_low": state_low,
            "state_high": state_high,
            "info_keys": [str(k) for k in type(self).info_keys],
            "total_keys": [str(k) for k in type(self).total_keys],
            "event_kinds": [str(k) for k in type(self).event_kinds],
            "decisions": bool(type(self).decisions),
            "action_mask": masked,
        }
