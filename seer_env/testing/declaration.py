"""Compare two models' declarations: a PythonModel prototype and its C++ port."""

from __future__ import annotations

from typing import Any

import numpy as np

from seer_env import _core
from seer_env.models.numba import NumbaModel
from seer_env.models.python_model import PythonModel

# What two implementations of one model must declare alike (docs and names may differ).
_PARAM_KEYS = ("name", "type", "default", "low", "high", "low_open", "high_is_cap")
_KEY_LISTS = ("info_keys", "total_keys", "event_kinds")


def declaration_of(model: str | type[PythonModel] | type[NumbaModel]) -> dict[str, Any]:
    """The declaration of a registered model name or a ``PythonModel``/``NumbaModel`` subclass."""
    if isinstance(model, str):
        return _core.workload_spec(model)
    if isinstance(model, type) and issubclass(model, (PythonModel, NumbaModel)):
        return model.workload_spec()
    raise ValueError(
        f"model must be a registered name or a PythonModel or NumbaModel subclass, got {model!r}"
    )


def declaration_difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """The first difference between two declarations' parameters, keys and state record."""
    rows_a = [tuple(p[k] for k in _PARAM_KEYS) for p in a["params"]]
    rows_b = [tuple(p[k] for k in _PARAM_KEYS) for p in b["params"]]
    for i, (ra, rb) in enumerate(zip(rows_a, rows_b)):
        if ra != rb:
            return f"params[{i}]: {dict(zip(_PARAM_KEYS, ra))} != {dict(zip(_PARAM_KEYS, rb))}"
    if len(rows_a) != len(rows_b):
        return f"params: {len(rows_a)} != {len(rows_b)} parameters"
    for key in _KEY_LISTS:
        if list(a[key]) != list(b[key]):
            return f"{key}: {list(a[key])} != {list(b[key])}"
    state_a, state_b = a["records"].get("state"), b["records"].get("state")
    if state_a is not None and state_b is not None and np.dtype(state_a) != np.dtype(state_b):
        return f"state record: {np.dtype(state_a)} != {np.dtype(state_b)}"
    return None


def assert_declarations_match(
    model_a: str | type[PythonModel] | type[NumbaModel],
    model_b: str | type[PythonModel] | type[NumbaModel],
) -> None:
    """Assert two models declare the same parameters, keys and state record.

    Run it before ``assert_models_equivalent`` on a prototype and its port: a
    default or a bound that differs is named here, where a trajectory would
    only show its effect.

    Raises:
        AssertionError: naming the first difference (model a's value first).
    """
    found = declaration_difference(declaration_of(model_a), declaration_of(model_b))
    if found:
        raise AssertionError(f"declarations differ: {found}")
