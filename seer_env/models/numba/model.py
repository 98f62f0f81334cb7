"""``NumbaModel``: the base class of a model whose handlers numba compiles (or interprets).

The handlers and records are the user's (see ``seer_env.models.numba``);
this class validates the records, builds the parameter record, and gives the
runtime either the compiled handlers (``compile.py``) or a ``PythonModel``
running them (``interpreted.py``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from seer_env.models.declared import DeclaredModel
from seer_env.models.numba.compile import compile_model
from seer_env.models.numba.interpreted import interpreted_class
from seer_env.models.python_model import _dtype_record, _packed_dtype, declared_config

_REQUIRED = ("on_action", "on_event", "write_snapshot", "observe", "reward")
_OPTIONAL = (
    "reset",
    "on_init",
    "on_step_begin",
    "terminated",
    "truncated",
    "info",
    "global_state",
    "totals",
)
_DEFAULT_PAYLOAD = np.dtype([("raw", "<u8", (8,))])
_DEFAULT_PARAMS = np.dtype([("unused", "<u8")])


class NumbaModel(DeclaredModel):
    """Base class of models whose handlers numba compiles (see the module docstring).

    Class attributes (the records, numpy structured dtypes without padding):
        state_dtype: per-entity state (zeroed at every reset).
        public_dtype: the snapshot record ``write_snapshot`` fills.
        payload_dtype: event payload record (<= 64 bytes); default 64 raw bytes.
        params_dtype: the parameter record handlers read (``self.params_record``).
        event_kinds, info_keys, total_keys, agent_prefix, name: as ``PythonModel``.
        params, space_docs: the declaration, as ``PythonModel``'s: the declared
            parameters (the keyword arguments of ``__init__`` but ``compiled``)
            are validated and defaulted by ``from_config``, as for every model.
        bounds_check: compiled handlers check every array index (default
            True): an index out of range fails the handler (``HandlerError``)
            instead of reading or writing past the array.

    Instance attributes, set in ``__init__``: ``num_entities``, ``num_agents``,
    ``lookahead``, ``dt``, ``observation_space``, ``action_space``,
    ``state_space`` (as ``PythonModel``) and ``params_record`` (``make_params``).

    Args:
        compiled: run the handlers compiled by numba (any executor and thread
            count) or interpreted (a ``PythonModel``: serial only, debuggable).
    """

    # The rest of the declaration: DeclaredModel's.
    public_dtype: ClassVar[Any] = None
    params_dtype: ClassVar[Any] = None
    # Compiled handlers check every index (numba's boundscheck): an index out
    # of range is a HandlerError (IndexError), never a write past an array.
    # Its cost is within the noise of a PCS step (docs/custom-models.md).
    bounds_check: ClassVar[bool] = True

    reset = on_init = on_step_begin = None
    terminated = truncated = info = global_state = totals = None

    def __init__(self, *, compiled: bool = True) -> None:
        if not isinstance(compiled, bool):
            raise ValueError(f"compiled must be a bool, got {compiled!r}")
        super().__init__()
        self.compiled = compiled
        self.params_record = None

    @classmethod
    def workload_spec(cls) -> dict[str, Any]:
        """The model's declaration, with the structure of ``_core.workload_spec``."""
        spec = interpreted_class(cls).workload_spec()
        records = cls._records()
        spec["records"]["public"] = _dtype_record(records["public"])
        spec["records"]["params"] = _dtype_record(records["params"])
        return spec

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> NumbaModel:
        """Build the model from a config (checked against ``params`` when declared).

        ``compiled`` is not a parameter of the model but of how it runs: it
        passes through unchecked (default True).
        """
        config = dict(config)
        compiled = config.pop("compiled", True)
        if cls.params:
            config = declared_config(cls.workload_spec(), config)
        return cls(**config, compiled=compiled)

    def make_params(self, **values) -> np.void:
        """A ``params_dtype`` record with these field values (others zero)."""
        record = np.zeros(1, self._records()["params"])
        for key, value in values.items():
            if key not in record.dtype.names:
                raise ValueError(f"params: {key!r} is not a field of params_dtype")
            record[key] = value
        return record[0]

    @classmethod
    def _records(cls) -> dict[str, np.dtype]:
        if cls.action_mask:
            raise ValueError(
                f"{cls.__name__}: a NumbaModel cannot declare action_mask = True (its compiled "
                "handler ABI has no action-mask hook); write the model as a PythonModel "
                "(valid_actions) or in C++ (Model::action_mask)"
            )
        if cls.state_dtype is None or cls.public_dtype is None:
            raise ValueError(f"{cls.__name__}: state_dtype and public_dtype must be set")
        payload = _packed_dtype("payload_dtype", cls.payload_dtype or _DEFAULT_PAYLOAD)
        if payload.itemsize > 64:
            raise ValueError(f"payload_dtype must be at most 64 bytes, got {payload.itemsize}")
        return {
            "state": _packed_dtype("state_dtype", cls.state_dtype),
            "public": _packed_dtype("public_dtype", cls.public_dtype),
            "payload": payload,
            "params": _packed_dtype("params_dtype", cls.params_dtype or _DEFAULT_PARAMS),
        }

    def _params_bytes(self) -> bytes:
        dtype = self._records()["params"]
        if self.params_record is None:
            return np.zeros(1, dtype).tobytes()
        record = np.asarray(self.params_record)
        if record.dtype != dtype or record.size != 1:
            raise ValueError(
                f"params_record must be one {dtype} record (make_params), got {record!r}"
            )
        return record.tobytes()

    @classmethod
    def _hooks(cls) -> dict[str, Any]:
        missing = [h for h in _REQUIRED if getattr(cls, h, None) is None]
        if missing:
            raise ValueError(f"{cls.__name__} must define the handlers {missing}")
        return {h: getattr(cls, h) for h in _REQUIRED + _OPTIONAL if getattr(cls, h) is not None}

    # -- what the runtime reads --------------------------------------------------------------
    def runtime_model(self):
        """What ``_core.Simulation`` runs: this model (compiled) or its ``PythonModel``."""
        if not self.compiled:
            return interpreted_class(type(self))(self)
        compile_model(type(self), self._discrete_actions())
        return self

    def _discrete_actions(self) -> bool:
        return self.action_space is None or isinstance(self.action_space, spaces.Discrete)

    def _compiled_layout(self) -> dict | None:
        if not self.compiled:
            return None
        compiled = compile_model(type(self), self._discrete_actions())
        records = self._records()
        spec = interpreted_class(type(self))(self)._spec()
        return {
            "spec": spec,
            "state_size": records["state"].itemsize,
            "public_size": records["public"].itemsize,
            "params": self._params_bytes(),
            "handlers": compiled.addresses,
            "keepalive": compiled,
        }
