"""Workload declarations as the Python side reads them.

Each model declares itself once, beside its C++ code (``seer/workload.hpp``):
its parameters (name, int/real, default, bounds, one-line doc), its spaces (as
text), its info/total keys and event kinds, and the byte layout of its records.
``seer_env._core.workload_spec(name)`` returns that declaration as plain data;
this module derives from it what would otherwise be written again by hand:

- ``declared_parameters(spec)``: a decorator giving an ``__init__`` the model's
  parameters (names, defaults, order) in its signature;
- ``validate_params(spec, values)``: the config dict, each value checked
  against the declared type and bounds (ValueError naming it);
- ``arguments_doc(spec)``: the model parameters' part of an env's "Arguments"
  docs (``seer_env.envs.version`` adds the call and the runtime options);
- ``record_dtype(name, record)``: a record as a NumPy structured dtype.

A ``PythonModel`` declares itself with the same structure
(``PythonModel.workload_spec()``).
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from seer_env import _core
from seer_env.validation import validate_int, validate_real

__all__ = [
    "arguments_doc",
    "declared_parameters",
    "entity_records",
    "model_defaults",
    "record_dtype",
    "signature_line",
    "validate_params",
    "workload_spec",
    "wrap_doc_line",
]

_DOC_WIDTH = 79  # generated docstring lines wrap here


def workload_spec(name: str) -> dict[str, Any]:
    """The declaration of registered model ``name`` (``_core.workload_spec``).

    Raises:
        ValueError: no model is registered under ``name``.
    """
    return _core.workload_spec(name)


def record_dtype(name: str, record: str = "state") -> np.dtype:
    """Record ``record`` of model ``name`` (e.g. "state", "public") as a NumPy dtype."""
    records = workload_spec(name)["records"]
    if record not in records:
        raise ValueError(f"record must be one of {sorted(records)} for {name}, got {record!r}")
    return np.dtype(records[record])


def entity_records(sim: Any, dtype: np.dtype) -> np.ndarray:
    """The entity states of a ``Simulation`` as a ``dtype`` array (one record per entity)."""
    raw = sim.entity_states()
    if raw.shape[1] != dtype.itemsize:
        raise ValueError(
            f"entity state size {raw.shape[1]} != dtype itemsize {dtype.itemsize}: "
            "the layouts disagree"
        )
    return np.ascontiguousarray(raw).view(dtype).reshape(-1)


def _annotation(param: Mapping[str, Any]) -> Any:
    base = int if param["type"] == "int" else float
    return base if param["default"] is not None else base | None


def model_parameters(spec: Mapping[str, Any]) -> list[inspect.Parameter]:
    """The declared parameters as ``inspect.Parameter`` objects, in table order."""
    return [
        inspect.Parameter(
            p["name"],
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=p["default"],
            annotation=_annotation(p),
        )
        for p in spec["params"]
    ]


def model_defaults(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter name -> declared default (None: computed by the model, see default_doc)."""
    return {p["name"]: p["default"] for p in spec["params"]}


def declared_parameters(spec: Mapping[str, Any]) -> Callable[[Callable], Callable]:
    """Decorate ``__init__(self, <other args>, **params)`` to take the declared parameters.

    The decorated function's signature is ``(self, <declared parameters>, <other
    args>)`` (so ``inspect.signature``, IDEs and positional calls see them); it
    binds a call against that signature (TypeError for unknown or missing
    arguments, as for a plain function) and passes the declared ones, defaults
    filled in, as ``**params``.
    """

    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        declared = model_parameters(spec)
        names = [p.name for p in declared]
        clash = set(names) & {p.name for p in own}
        if clash:
            raise ValueError(f"{fn.__qualname__} repeats declared parameters {sorted(clash)}")
        others = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in own[1:]]
        full = sig.replace(parameters=[own[0], *declared, *others])

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = full.bind(*args, **kwargs)
            bound.apply_defaults()
            values = dict(bound.arguments)
            this = values.pop(own[0].name)
            params = {n: values.pop(n) for n in names}
            return fn(this, **values, **params)

        wrapper.__signature__ = full  # type: ignore[attr-defined]
        return wrapper

    return decorate


def validate_params(spec: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The config dict for ``values``, each checked against its declared type and bounds.

    A parameter without a fixed default that is None is left out (the model
    computes it). Bounds that are only caps of the C++ reader (``high_is_cap``)
    are left to it. Cross-parameter rules are the model's (its C++ reader
    raises ValueError).

    Raises:
        ValueError: naming the parameter and the value.
    """
    config: dict[str, Any] = {}
    for p in spec["params"]:
        name, value = p["name"], values[p["name"]]
        if value is None and p["default"] is None:
            continue
        if p["type"] == "int":
            high = None if p["high_is_cap"] else p["high"]
            config[name] = validate_int(name, value, p["low"], high)
        else:
            high = float("inf") if p["high_is_cap"] else p["high"]
            config[name] = validate_real(name, value, p["low"], high, low_open=p["low_open"])
    return config


def _range_text(p: Mapping[str, Any]) -> str:
    low, high = p["low"], p["high"]
    if p["type"] == "int":
        return f">= {low}" if p["high_is_cap"] else f"{low}..{high}"
    if p["high_is_cap"]:
        return f"> {low!r}" if p["low_open"] else f">= {low!r}"
    return f"{'(' if p['low_open'] else '['}{low!r}, {high!r}]"


def signature_line(call: str, signature: inspect.Signature) -> str:
    """``call(name=default, ...)`` for ``signature``, wrapped as docstrings are."""
    parts = [
        f"{p.name}={p.default!r}"
        for p in signature.parameters.values()
        if p.default is not inspect.Parameter.empty
    ]
    text = f"``{call}({', '.join(parts)})``"
    return "\n".join(textwrap.wrap(text, _DOC_WIDTH, break_on_hyphens=False))


def wrap_doc_line(item: str) -> list[str]:
    """A Markdown list item wrapped as generated docstrings are."""
    return textwrap.wrap(item, _DOC_WIDTH, subsequent_indent="  ", break_on_hyphens=False)


def arguments_doc(spec: Mapping[str, Any]) -> str:
    """The declared parameters as a Markdown list: name, doc, range, default."""
    lines = []
    for p in spec["params"]:
        default = p["default_doc"] if p["default"] is None else repr(p["default"])
        lines += wrap_doc_line(
            f"- ``{p['name']}``: {p['doc']}; {_range_text(p)}, default ``{default}``."
        )
    return "\n".join(lines)
