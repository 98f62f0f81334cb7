"""``seer_env.NumbaModel``: a model in Python whose handlers run compiled, in parallel.

Write the model once, as plain functions over numpy records; run it

* **interpreted** (``compiled=False``): through ``PythonModel``, serial, with
  ``print`` and a debugger; or
* **compiled** (the default, ``pip install seer_env[numba]``): numba compiles
  every handler to a C function (a ``cfunc`` in nopython mode) that the C++
  runtime calls on its worker threads, without the GIL, on any executor.

Both modes call the same runtime for random draws and scheduling
(``seer_env.handler_api``), so they are byte-identical; the testing kit checks
it (``assert_models_equivalent``). The records are numpy structured dtypes
without padding, like a ``PythonModel``'s; the handlers are static functions
(numba compiles functions, not methods)::

    import numpy as np
    from gymnasium import spaces
    import seer_env
    from seer_env import handler_api as api

    class Ring(seer_env.NumbaModel):
        state_dtype = np.dtype([("tokens", "<u8")])
        public_dtype = np.dtype([("tokens", "<u8")])
        payload_dtype = np.dtype([("hops", "<u8")])
        params_dtype = np.dtype([("delay", "<f8")])
        event_kinds = ("TOKEN",)

        def __init__(self, n=8, delay=0.5, compiled=True):
            super().__init__(compiled=compiled)
            self.num_entities = self.num_agents = n
            self.lookahead, self.dt = delay, 1.0
            self.observation_space = spaces.Box(0, np.inf, (1,), np.float32)
            self.action_space = spaces.Discrete(2)
            self.params_record = self.make_params(delay=delay)

        @staticmethod
        def on_action(ctx, state, snapshot, params, action):
            ...

Handlers (entity-local; ``state`` is the entity's own writable record,
``snapshot`` the read-only array of public records, ``params`` the read-only
parameter record; ``on_action``, ``on_event``, ``write_snapshot``, ``observe`` and
``reward`` are required, the rest optional):

=====================================================  =============================
``reset(states, params)``                              episode start, states zeroed
``on_init(ctx, state, snapshot, params)``              initial events
``on_step_begin(ctx, state, snapshot, params)``        every entity, step start
``on_action(ctx, state, snapshot, params, action)``    int (Discrete) or float32[dim]
``on_event(ctx, state, snapshot, params, kind, payload)``  payload: a writable copy
``write_snapshot(state, public, params)``              the entity's snapshot record
``observe(agent, state, snapshot, params, out)``       fills float32[obs_dim]
``reward(agent, state, snapshot, params)``             returns a float
``terminated``/``truncated(agent, state, snapshot, params)``  return a bool
``info(agent, state, snapshot, params, out)``          fills int64[len(info_keys)]
``global_state(states, snapshot, params, out)``        fills float32[state_dim]
``totals(states, params, out)``                        fills int64[len(total_keys)]
=====================================================  =============================

Helper functions that handlers call must be decorated with ``@seer_env.kernel``
(plain Python when interpreted, compiled inline by numba otherwise).

Errors: an exception in a compiled handler becomes ``seer_env.HandlerError``
naming the entity, event kind and time (numba keeps no message in compiled
code: rerun with ``compiled=False`` to see it); a contract breach in
``schedule`` is ``seer_env.ContractViolation``, as for every model.

Compiled code is cached on disk (numba's cache; the generated entry points
under ``~/.cache/seer_env/numba`` or ``$SEER_ENV_NUMBA_CACHE``): the first
construction of a model class compiles (seconds, a progress line on stderr),
later ones in any process load it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import inspect
import os
import sys
import time
import types
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from seer_env.python_model import PythonModel, _dtype_record, _packed_dtype, declared_config

__all__ = ["NumbaCompileError", "NumbaModel", "compile_report", "kernel"]

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


class NumbaCompileError(TypeError):
    """numba could not compile a handler; the message names it and quotes numba."""


def _numba_available() -> bool:
    return importlib.util.find_spec("numba") is not None


def kernel(fn):
    """Mark ``fn`` as a helper that handlers call (both modes).

    ``fn`` stays a plain Python function (interpreted mode); when numba is
    installed, numba compiles it wherever a compiled handler calls it.
    """
    if _numba_available():
        from numba.extending import overload

        @functools.wraps(fn)
        def typer(*args, **kwargs):
            return fn

        overload(fn)(typer)
    return fn


def cache_dir() -> Path:
    """Where the generated entry points (and their numba cache) live."""
    configured = os.environ.get("SEER_ENV_NUMBA_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "seer_env" / "numba"


# -- the generated entry points ------------------------------------------------------------------
# One C entry point per handler: numpy views of the raw pointers, the user's
# handler, and its exceptions turned into a status (numba would print them as
# "Exception ignored" and return 0). Kept as source text: numba caches
# functions of real files only, and this file is content-addressed.
_ENTRY = {
    "reset": (
        "(voidptr, voidptr, uint64, voidptr, voidptr, uint64)",
        "states, snapshot, n, params, out, out_size",
        "_k(carray(states, n, _STATE), carray(params, 1, _PARAMS)[0])",
    ),
    "on_init": (
        "(voidptr, voidptr, voidptr, voidptr)",
        "ctx, state, snapshot, params",
        "_k(ctx, carray(state, 1, _STATE)[0], _SNAPSHOT, carray(params, 1, _PARAMS)[0])",
    ),
    "on_action_discrete": (
        "(voidptr, voidptr, voidptr, voidptr, int64, voidptr, uint64)",
        "ctx, state, snapshot, params, discrete, box, dim",
        "_k(ctx, carray(state, 1, _STATE)[0], _SNAPSHOT, carray(params, 1, _PARAMS)[0], discrete)",
    ),
    "on_action_box": (
        "(voidptr, voidptr, voidptr, voidptr, int64, voidptr, uint64)",
        "ctx, state, snapshot, params, discrete, box, dim",
        "_k(ctx, carray(state, 1, _STATE)[0], _SNAPSHOT, "
        "carray(params, 1, _PARAMS)[0], carray(box, dim, np.float32))",
    ),
    "on_event": (
        "(voidptr, voidptr, voidptr, voidptr, uint32, voidptr)",
        "ctx, state, snapshot, params, kind, payload",
        "_k(ctx, carray(state, 1, _STATE)[0], _SNAPSHOT, "
        "carray(params, 1, _PARAMS)[0], kind, carray(payload, 1, _PAYLOAD)[0])",
    ),
    "write_snapshot": (
        "(voidptr, voidptr, voidptr)",
        "state, public, params",
        "_k(carray(state, 1, _STATE)[0], carray(public, 1, _PUBLIC)[0], "
        "carray(params, 1, _PARAMS)[0])",
    ),
    "observe": (
        "(uint32, voidptr, voidptr, uint64, voidptr, voidptr, uint64)",
        "agent, state, snapshot, n, params, out, out_size",
        "_k(agent, carray(state, 1, _STATE)[0], carray(snapshot, n, _PUBLIC), "
        "carray(params, 1, _PARAMS)[0], carray(out, out_size, np.float32))",
    ),
    "reward": (
        "(uint32, voidptr, voidptr, uint64, voidptr, voidptr, uint64)",
        "agent, state, snapshot, n, params, out, out_size",
        "carray(out, 1, np.float64)[0] = _k(agent, carray(state, 1, _STATE)[0], "
        "carray(snapshot, n, _PUBLIC), carray(params, 1, _PARAMS)[0])",
    ),
    "flag": (
        "(uint32, voidptr, voidptr, uint64, voidptr, voidptr, uint64)",
        "agent, state, snapshot, n, params, out, out_size",
        "carray(out, 1, np.uint8)[0] = 1 if _k(agent, carray(state, 1, _STATE)[0], "
        "carray(snapshot, n, _PUBLIC), carray(params, 1, _PARAMS)[0]) else 0",
    ),
    "info": (
        "(uint32, voidptr, voidptr, uint64, voidptr, voidptr, uint64)",
        "agent, state, snapshot, n, params, out, out_size",
        "_k(agent, carray(state, 1, _STATE)[0], carray(snapshot, n, _PUBLIC), "
        "carray(params, 1, _PARAMS)[0], carray(out, out_size, np.int64))",
    ),
    "global_state": (
        "(voidptr, voidptr, uint64, voidptr, voidptr, uint64)",
        "states, snapshot, n, params, out, out_size",
        "_k(carray(states, n, _STATE), carray(snapshot, n, _PUBLIC), "
        "carray(params, 1, _PARAMS)[0], carray(out, out_size, np.float32))",
    ),
    "totals": (
        "(voidptr, voidptr, uint64, voidptr, voidptr, uint64)",
        "states, snapshot, n, params, out, out_size",
        "_k(carray(states, n, _STATE), carray(params, 1, _PARAMS)[0], "
        "carray(out, out_size, np.int64))",
    ),
}
_SNAPSHOT = "carray(snapshot, handler_api.num_entities(ctx), _PUBLIC)"
_ENTRY_OF_HOOK = {"on_step_begin": "on_init", "terminated": "flag", "truncated": "flag"}

_HEADER = """# Generated by seer_env.numba_model for {qualname}: numba's entry points.
# Inputs digest: {digest}
import numpy as np
from numba import carray

from seer_env import handler_api
"""


def _entry_source(name: str, entry: str) -> str:
    _, args, call = _ENTRY[entry]
    return (
        f"\n\ndef {name}({args}):\n"
        f"    try:\n"
        f"        {call.replace('_k(', f'_k_{name}(').replace('_SNAPSHOT', _SNAPSHOT)}\n"
        f"    except Exception:  # numba: no message; the runtime raises HandlerError\n"
        f"        return 1\n"
        f"    return 0\n"
    )


class _Compiled:
    """A model class's compiled handlers: C entry points and their addresses."""

    def __init__(self, addresses: dict[str, int], cfuncs: list, seconds: float, cached: bool):
        self.addresses = addresses
        self.cfuncs = cfuncs  # own the machine code behind the addresses
        self.seconds = seconds
        self.cached = cached


_COMPILED: dict[tuple, _Compiled] = {}
_REPORT: dict[str, dict] = {}


def compile_report() -> dict[str, dict]:
    """Per compiled model class: ``{"seconds": ..., "from_cache": bool}`` of this process."""
    return {name: dict(info) for name, info in _REPORT.items()}


def _source_bytes(obj) -> bytes:
    try:
        return Path(inspect.getsourcefile(obj) or "").read_bytes()
    except (OSError, TypeError):
        return b""


class NumbaModel:
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

    Instance attributes, set in ``__init__``: ``num_entities``, ``num_agents``,
    ``lookahead``, ``dt``, ``observation_space``, ``action_space``,
    ``state_space`` (as ``PythonModel``) and ``params_record`` (``make_params``).

    Args:
        compiled: run the handlers compiled by numba (any executor and thread
            count) or interpreted (a ``PythonModel``: serial only, debuggable).
    """

    state_dtype: ClassVar[Any] = None
    public_dtype: ClassVar[Any] = None
    payload_dtype: ClassVar[Any] = None
    params_dtype: ClassVar[Any] = None
    event_kinds: ClassVar[tuple] = ()
    info_keys: ClassVar[tuple] = ()
    total_keys: ClassVar[tuple] = ()
    agent_prefix: ClassVar[str] = "agent"
    name: ClassVar[str] = ""
    params: ClassVar[tuple] = ()
    space_docs: ClassVar[dict] = {}

    reset = on_init = on_step_begin = None
    terminated = truncated = info = global_state = totals = None

    def __init__(self, *, compiled: bool = True) -> None:
        if not isinstance(compiled, bool):
            raise ValueError(f"compiled must be a bool, got {compiled!r}")
        self.compiled = compiled
        self.num_entities = 0
        self.num_agents = 0
        self.lookahead = 0.0
        self.dt = 1.0
        self.observation_space: spaces.Box | None = None
        self.action_space: spaces.Space | None = None
        self.state_space: spaces.Box | None = None
        self.params_record = None

    @classmethod
    def workload_spec(cls) -> dict[str, Any]:
        """The model's declaration, with the structure of ``_core.workload_spec``."""
        spec = _interpreted_class(cls).workload_spec()
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
            return _interpreted_class(type(self))(self)
        _compile(type(self), self._discrete_actions())
        return self

    def _discrete_actions(self) -> bool:
        return self.action_space is None or isinstance(self.action_space, spaces.Discrete)

    def _compiled_layout(self) -> dict | None:
        if not self.compiled:
            return None
        compiled = _compile(type(self), self._discrete_actions())
        records = self._records()
        spec = _interpreted_class(type(self))(self)._spec()
        return {
            "spec": spec,
            "state_size": records["state"].itemsize,
            "public_size": records["public"].itemsize,
            "params": self._params_bytes(),
            "handlers": compiled.addresses,
            "keepalive": compiled,
        }


# -- compiled mode --------------------------------------------------------------------------------
def _compile(cls: type, discrete: bool) -> _Compiled:
    key = (cls, discrete)
    if key in _COMPILED:
        return _COMPILED[key]
    if not _numba_available():
        raise ModuleNotFoundError(
            f"{cls.__name__} runs compiled with numba: pip install 'seer_env[numba]', "
            f"or pass compiled=False to run it interpreted"
        )
    import numba

    from seer_env import _numba_abi

    records = cls._records()
    hooks = cls._hooks()
    entries = {}
    for hook in hooks:
        entry = _ENTRY_OF_HOOK.get(hook, hook)
        if hook == "on_action":
            entry = "on_action_discrete" if discrete else "on_action_box"
        entries[hook] = entry
    body = "".join(_entry_source(h, e) for h, e in entries.items())
    digest = hashlib.sha256()
    # Everything the compiled code depends on: edits to any of these files
    # must not load stale code (numba itself tracks only a function's own file).
    sources = {_source_bytes(c) for c in cls.__mro__ if c is not object}
    sources |= {_source_bytes(getattr(fn, "py_func", fn)) for fn in hooks.values()}
    for part in (
        body.encode(),
        *sorted(sources),
        _source_bytes(_numba_abi),
        _source_bytes(sys.modules[__name__]),
        numba.__version__.encode(),
        repr(sorted((k, v.descr) for k, v in records.items())).encode(),
    ):
        digest.update(hashlib.sha256(part).digest())
    qualname = f"{cls.__module__}.{cls.__qualname__}"
    text = _HEADER.format(qualname=qualname, digest=digest.hexdigest()) + body
    cacheable = b"" != _source_bytes(cls) and "<locals>" not in cls.__qualname__
    safe = "".join(c if c.isalnum() else "_" for c in qualname)
    path = cache_dir() / f"{safe}_{digest.hexdigest()[:16]}.py"
    cached = cacheable and path.exists()
    if cacheable and not cached:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)  # atomic: concurrent processes write the same text
        except OSError as error:
            print(
                f"seer_env: cannot cache compiled code in {path.parent}: {error}", file=sys.stderr
            )
            cacheable = False
    # A real module: numba finds a function's globals by its module's name
    # when it loads the function from its cache.
    module = types.ModuleType(f"seer_env_numba_entry_{safe}_{digest.hexdigest()[:16]}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    namespace.update(
        _STATE=records["state"],
        _PUBLIC=records["public"],
        _PAYLOAD=records["payload"],
        _PARAMS=records["params"],
    )
    for hook, fn in hooks.items():
        is_jitted = isinstance(fn, numba.core.dispatcher.Dispatcher)
        namespace[f"_k_{hook}"] = fn if is_jitted else numba.njit(cache=cacheable)(fn)
    exec(compile(text, str(path) if cacheable else f"<{qualname} entry points>", "exec"), namespace)

    if not cached:
        print(
            f"seer_env: compiling {cls.__name__}'s {len(hooks)} handlers with numba "
            f"(once; cached in {path.parent})...",
            file=sys.stderr,
            flush=True,
        )
    started = time.perf_counter()
    addresses, cfuncs = {}, []
    from numba.core.errors import NumbaError

    for hook, entry in entries.items():
        signature = "int32" + _ENTRY[entry][0]
        try:
            cf = numba.cfunc(signature, nopython=True, cache=cacheable)(namespace[hook])
        except NumbaError as error:
            raise NumbaCompileError(
                f"{cls.__name__}.{hook} cannot be compiled by numba (nopython mode); run with "
                f"compiled=False to debug it. numba says:\n{error}"
            ) from None
        addresses[hook] = cf.address
        cfuncs.append(cf)
    seconds = time.perf_counter() - started
    compiled = _Compiled(addresses, cfuncs, seconds, cached)
    _COMPILED[key] = compiled
    _REPORT[qualname] = {"seconds": seconds, "from_cache": cached}
    if not cached:
        print(f"seer_env: compiled {cls.__name__} in {seconds:.1f} s", file=sys.stderr, flush=True)
    return compiled


# -- interpreted mode -----------------------------------------------------------------------------
_INTERPRETED: dict[type, type] = {}


def _interpreted_class(cls: type) -> type:
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
            "__doc__": cls.__doc__,
        }
        _INTERPRETED[cls] = type(f"{cls.__name__}Interpreted", (_InterpretedModel,), attrs)
    return _INTERPRETED[cls]


class _InterpretedModel(PythonModel):
    """A ``NumbaModel`` run as a ``PythonModel``: the same handlers, as Python."""

    def __init__(self, model: NumbaModel) -> None:
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
        from seer_env.handler_api import InterpretedContext

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
