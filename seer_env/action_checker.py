"""The one check of actions against an action space, shared by the env and the vector env.

``SeerParallelEnv.step`` (a dict keyed by agent), ``SeerParallelEnv.step_arrays``
and ``SeerVectorEnv.step`` (one row per agent) all turn what the caller gave
into the array the runtime reads (int64 ``[rows]`` for Discrete, float32
``[rows, dim]`` for Box) with ``ActionChecker``, so every path accepts and
rejects the same values. A rejected batch raises ValueError before the runtime
sees it: the simulation is unchanged.

Rows can be named two ways: by agent (``names``: the env says
``actions['cell_0'] must be an integer, got 0.5``) or by row index (the vector
env says ``actions[0] is outside the action space: 0.5``). Rows that are not
live (``live`` mask) are not checked: the runtime ignores them.

What Gaussian policies need, on every path: Box actions outside the bounds
(infinities included) are clipped to the Box, as Gymnasium's ``ClipAction``
does; NaN is an error (a NaN action means a policy diverged: acting on it
would hide that). Discrete actions must be in the space. A bool is not an
action (neither an index nor a coordinate): ``True``, ``np.bool_`` and bool
arrays are refused on every path, as the low-level ``Simulation`` refuses them.

An action dict, on every env (the same policy as PettingZoo's own envs and
SuperSuit's ``black_death``, so ``{a: pi(o) for a in env.possible_agents}``
keeps working after agents are done):

- actions for agents that are done (in ``possible_agents``, not live) are
  ignored, their values unchecked;
- a key that is no agent's is a ValueError naming it;
- a live agent left out takes the model's default action where the env has
  one (Box: aircraft hovers, the runtime calls no ``on_action``) and is a
  ValueError naming it where it has none (Discrete: pcs, whose guard channels
  have no neutral value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

_NUMERIC_KINDS = "iuf"  # signed and unsigned integer, real (a bool is not an action)
_BOOLS = (bool, np.bool_)


def _is_numeric(value: Any) -> bool:
    """Whether ``value`` (one agent's action, any nesting) holds only integers and reals."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):  # ragged nested lists
        return False
    if array.dtype.kind in _NUMERIC_KINDS:
        return True
    if array.dtype.kind != "O":  # bools, strings, bytes, complex, dates
        return False
    # Python ints beyond int64 stay objects: numbers (the range check rejects them).
    return all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in array.ravel().tolist()
    )


def _is_bool(value: Any) -> bool:
    """Whether ``value`` (one agent's action as given) is a bool or a bool array."""
    return isinstance(value, _BOOLS) or (isinstance(value, np.ndarray) and value.dtype.kind == "b")


def _holds_bool(value: Any) -> bool:
    """Whether ``value`` (an action or a nested list of them) holds a bool anywhere.

    numpy turns ``[True, 2]`` into ``[1, 2]``: the bools are found before that.
    """
    if _is_bool(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_bool(v) for v in value)
    return False


_MAY_HOLD_BOOLS = {bool, np.bool_, np.ndarray, list, tuple}


def _first_bool(values: Sequence[Any]) -> int | None:
    """Index of the first of ``values`` holding a bool, or None (types first: one C pass)."""
    if _MAY_HOLD_BOOLS.isdisjoint(map(type, values)):
        return None
    return next((j for j, v in enumerate(values) if _holds_bool(v)), None)


def _shown(value: Any) -> str:
    """``value`` for a message: NumPy scalars and arrays as plain Python values (exact)."""
    if isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()
    return repr(value)


def _rows_of(actions: Any) -> Sequence[Any]:
    """The rows of ``actions`` as given (a list stays a list: numpy would unify its types)."""
    if isinstance(actions, np.ndarray):
        return actions
    try:
        return list(actions)
    except TypeError:  # not iterable: a scalar, refused by the shape check already
        return [actions]


class ActionChecker:
    """Checks batches of actions against one agent's action space.

    Args:
        action: the ``action`` entry of a model spec (``Simulation.spec["action"]``):
            ``discrete``, ``n`` (Discrete), ``dim``, ``low`` and ``high`` (Box).
    """

    def __init__(self, action: Mapping[str, Any]) -> None:
        self.discrete = bool(action["discrete"])
        self.n = int(action["n"])
        self.dim = int(action["dim"])
        # float32 like the space: the messages print the bounds the space has.
        self.low = np.float32(action["low"])
        self.high = np.float32(action["high"])
        self.row_shape: tuple[int, ...] = () if self.discrete else (self.dim,)

    def __repr__(self) -> str:
        if self.discrete:
            return f"ActionChecker(Discrete({self.n}))"
        return f"ActionChecker(Box({self.low}, {self.high}, ({self.dim},)))"

    # -- one row per agent ------------------------------------------------------------------------
    def check_array(
        self,
        actions: Any,
        num_rows: int,
        *,
        live: np.ndarray | None = None,
        names: Sequence[str] | None = None,
    ) -> np.ndarray:
        """Return ``actions`` as the runtime's C-contiguous array, or raise ValueError.

        Args:
            actions: ``[num_rows]`` (Discrete) or ``[num_rows, dim]`` (Box), any
                integer or real dtype (not bool).
            num_rows: rows the batch must have.
            live: bool mask of the rows to check (None: all); the other rows are
                passed through (converted) and must be ignored by the runtime.
            names: agent name of each row, for the messages (None: rows are
                named by index, vector env style).
        """
        given = np.asarray(actions)
        shape = (num_rows, *self.row_shape)
        if given.shape != shape:
            raise ValueError(f"actions must have shape {shape}, got {given.shape}")
        listed = isinstance(actions, (list, tuple)) and _first_bool(actions) is not None
        if given.dtype.kind == "b" or listed:
            got = "a list holding bools" if listed else "dtype bool"
            raise ValueError(
                f"actions must be an integer or real array, got {got} (a bool is not an action)"
            )
        if given.dtype.kind not in _NUMERIC_KINDS:
            if names is not None:  # name the first live agent whose action is not a number
                rows = range(num_rows) if live is None else np.flatnonzero(live).tolist()
                self._require_numeric(_rows_of(actions), names, rows)
            raise ValueError(f"actions must be an integer or real array, got dtype {given.dtype}")
        return self._checked(given, live, names)

    # -- a dict keyed by agent ------------------------------------------------------------------
    def check_dict(
        self, actions: Any, live: list[str], index: Mapping[str, int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(actions, alive)`` arrays over all agents from a dict of live agents' actions.

        Args:
            actions: one action per live agent, keyed by agent name.
            live: the live agents, in row order.
            index: row of every possible agent.

        Returns:
            tuple: the runtime's action array (zero rows for agents not live) and
            the uint8 alive mask.
        """
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict keyed by agent, got {type(actions).__name__}")
        try:
            # One copy (one C call for a dict): another thread changing the
            # caller's dict cannot change what is checked and sent.
            actions = dict(actions)
        except (RuntimeError, KeyError) as exc:  # a subclass's own iteration saw a change
            raise RuntimeError(
                "actions: the dict was changed (by another thread?) while step() read it; "
                "pass a dict nobody changes during the call"
            ) from exc
        missing = [a for a in live if a not in actions]
        if len(actions) != len(live) - len(missing):
            # Keys that are not live: agents that are done (ignored, as
            # PettingZoo's envs and SuperSuit's black_death do) or no agent's.
            live_set = set(live)
            unknown = [a for a in actions if a not in live_set and a not in index]
            if unknown:
                raise ValueError(f"actions: unknown agents {unknown[:5]} (not in possible_agents)")
        if missing and self.discrete:
            raise ValueError(f"actions: no action for live agents {missing[:5]}")
        if missing:  # Box: those agents take the model's default action (no on_action)
            live = [a for a in live if a in actions]
        num_agents = len(index)
        if not live:
            zeros = np.zeros((num_agents, *self.row_shape), dtype=np.float32)
            return zeros, np.zeros(num_agents, dtype=np.uint8)
        rows = [index[a] for a in live]
        values = [actions[a] for a in live]
        first = _first_bool(values)
        if first is not None:
            what = "an integer action index" if self.discrete else "a real vector"
            raise ValueError(
                f"actions[{live[first]!r}] must be {what}, got {_shown(values[first])}"
                " (a bool is not an action)"
            )
        try:
            given = np.asarray(values)
        except (TypeError, ValueError):  # ragged: some action has the wrong shape
            given = None
        if given is None or given.shape != (len(live), *self.row_shape):
            self._raise_wrong_shape(live, values)
        if given.dtype.kind not in _NUMERIC_KINDS:
            self._require_numeric(values, live, range(len(live)))
            # Python numbers numpy keeps as objects (ints beyond int64): the
            # range check that follows rejects what does not fit.
            given = given.astype(np.float64)
        checked = self._checked(given, None, live, values)
        out = np.zeros((num_agents, *self.row_shape), dtype=checked.dtype)
        out[rows] = checked
        alive = np.zeros(num_agents, dtype=np.uint8)
        alive[rows] = 1
        return out, alive

    # -- shared ---------------------------------------------------------------------------------
    def _checked(
        self,
        given: np.ndarray,
        live: np.ndarray | None,
        names: Sequence[str] | None,
        originals: Sequence[Any] | None = None,
    ) -> np.ndarray:
        """``given`` (numeric, right shape) converted for the runtime; ValueError on a bad row.

        ``originals``: the rows as the caller gave them, for the messages
        (numpy may have promoted them: ``uint64`` next to an int becomes a float).
        """
        if self.discrete:
            if given.dtype.kind == "f":
                with np.errstate(invalid="ignore"):  # NaN compares False: flagged by ~(>= 0)
                    bad = ~(given >= 0) | (given >= self.n) | (given != np.floor(given))
            else:
                bad = (given < 0) | (given >= self.n)
        else:
            if given.dtype == np.float32:
                cast = np.ascontiguousarray(given)
            else:
                with np.errstate(over="ignore"):  # beyond float32: inf, rejected below
                    cast = np.ascontiguousarray(given, dtype=np.float32)
            bad = np.isnan(cast).any(axis=1)  # the rest is clipped below
        if live is not None:
            bad &= live
        if bad.any():
            self._raise_bad_row(given, int(np.flatnonzero(bad)[0]), names, originals)
        if not self.discrete:
            # ClipAction; a fresh array, never a view of the caller's.
            return np.clip(cast, self.low, self.high)
        if given.dtype.kind == "f" and live is not None:
            given = np.where(live, given, 0)  # rows not live may hold NaN: no cast warning
        return np.ascontiguousarray(given, dtype=np.int64)

    def _raise_bad_row(
        self,
        given: np.ndarray,
        i: int,
        names: Sequence[str] | None,
        originals: Sequence[Any] | None = None,
    ) -> None:
        """Raise the ValueError for row ``i``, which is outside the space (error path only)."""
        value = given[i]
        if names is None:
            raise ValueError(f"actions[{i}] is outside the action space: {value!r}")
        name = names[i]
        if self.discrete:
            if given.dtype.kind == "f" and not (np.isfinite(value) and value == np.floor(value)):
                raise ValueError(f"actions[{name!r}] must be an integer, got {value!r}")
            # As given: a promoted float would print 2**63 + 1 rounded.
            shown = value if originals is None else _shown(originals[i])
            raise ValueError(f"actions[{name!r}] must be in [0, {self.n}), got {shown}")
        with np.errstate(over="ignore"):
            row = value.astype(np.float32)  # what the runtime would have read
        raise ValueError(f"actions[{name!r}] must not be NaN, got {row.tolist()}")

    def _require_numeric(self, values: Sequence[Any], names: Sequence[str], rows: Any) -> None:
        """ValueError naming the first of ``rows`` holding a value that is not a number.

        ``values`` are the rows as the caller gave them: in the array numpy
        builds from a mix of numbers and strings every value is a string, so
        that array cannot tell which agent sent the string.
        """
        for i in rows:
            if not _is_numeric(values[i]):
                value = values[i]
                if isinstance(value, (np.ndarray, np.generic)):
                    value = value.tolist()
                raise ValueError(f"actions[{names[i]!r}] must be numeric, got {value!r}")

    def _raise_wrong_shape(self, names: list[str], values: list[Any]) -> None:
        """Name the first agent whose action does not have the space's shape (error path only)."""
        shape = self.row_shape
        what = "an integer scalar" if self.discrete else f"an array of shape {shape}"
        for name, value in zip(names, values):
            try:
                ok = np.shape(value) == shape
            except (TypeError, ValueError):  # ragged nested lists
                ok = False
            if not ok:
                raise ValueError(f"actions[{name!r}] must be {what}, got {value!r}")
        raise ValueError(f"actions must be {what} per agent")
