"""What a ``seer_env.NumbaModel`` handler may do, as plain functions of ``ctx``.

The same handler code runs in both modes of a ``NumbaModel``:

* interpreted (``compiled=False``): ``ctx`` is a Python object over the
  runtime's handler context and these functions run as written here;
* compiled (numba, the default): ``ctx`` is the runtime's ``seer_ctx*`` and
  numba replaces each call by a call into the C ABI of ``cpp/src/handler_abi.h``
  (``seer_env.models.numba.abi``).

Either way the numbers come from the runtime: the entity's Philox stream and the
contract checks of ``schedule`` are the C++ ones, so both modes and a C++ port
draw the same values bit for bit.

Example::

    from seer_env import handler_api as api

    def on_event(ctx, state, snapshot, params, kind, payload):
        delay = api.exponential(ctx, params["mean_delay"])
        api.schedule(ctx, api.self_id(ctx), api.now(ctx) + delay, kind, payload)
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "below",
    "dt",
    "exponential",
    "lookahead",
    "lowest_zero_bit",
    "next_u64",
    "now",
    "num_entities",
    "popcount",
    "request_decision",
    "schedule",
    "schedule_values",
    "self_id",
    "source",
    "uniform",
]


class InterpretedContext:
    """``ctx`` of an interpreted handler: the runtime's context and the event's source."""

    __slots__ = ("context", "source", "model")

    def __init__(self, context, source: int, model) -> None:
        self.context = context
        self.source = source
        self.model = model


def now(ctx) -> float:
    """Simulated time of this handler."""
    return ctx.context.now


def self_id(ctx) -> int:
    """The entity this handler runs for."""
    return ctx.context.self


def source(ctx) -> int:
    """The entity that scheduled the event being handled (``self_id`` outside ``on_event``)."""
    return ctx.source


def num_entities(ctx) -> int:
    """Number of entities of the model."""
    return ctx.model.num_entities


def lookahead(ctx) -> float:
    """The model's lookahead: the least delay of an event for another entity."""
    return ctx.model.lookahead


def dt(ctx) -> float:
    """The step length."""
    return ctx.model.dt


def uniform(ctx) -> float:
    """Next uniform double in [0, 1) of this entity's stream."""
    return ctx.context.rng.uniform()


def exponential(ctx, mean: float) -> float:
    """Next exponential draw with this ``mean`` (``-mean * log1p(-uniform)``)."""
    return ctx.context.rng.exponential(mean)


def below(ctx, n: int) -> int:
    """Next uniform integer in [0, n) (n >= 1)."""
    return ctx.context.rng.below(n)


def next_u64(ctx) -> int:
    """Next raw 64-bit word of this entity's stream."""
    return ctx.context.rng.next_u64()


def request_decision(ctx) -> int:
    """Ask for this agent's next action (a model with ``decisions = True``).

    The agent waits from now, its later events held, until ``on_action`` runs
    with the action at this time (docs/decisions.md). A request by an entity
    that is not an agent, a second one in the same handler, or one in a model
    without ``decisions`` is a ``ContractViolation``.
    """
    ctx.context.request_decision()
    return 0


def schedule(ctx, target: int, time: float, kind: int, payload=None) -> int:
    """Schedule ``kind`` for ``target`` at ``time`` with a payload (or None).

    ``payload``: a ``payload_dtype`` record, or an array of one record. Build a
    new payload as an array and pass the array (``p = np.zeros(1, PAYLOAD)``,
    ``p[0]["hops"] = 1``, ``schedule(ctx, ..., p)``): in compiled code a record
    taken from an array (``np.zeros(1, PAYLOAD)[0]``) does not keep the array
    alive, and numba frees the array after its last use, which can come before
    the runtime reads the record (a use after free: ``make asan``/``make tsan``
    report it).

    ``time`` must be >= now for the entity itself and >= now + lookahead for
    others; a breach raises ``seer_env.ContractViolation`` when the handler
    returns (compiled) or at once (interpreted). Returns 0.
    """
    if payload is not None and getattr(payload, "ndim", 0) == 1 and len(payload) != 1:
        raise ValueError("schedule: a payload array must hold exactly one record")
    ctx.context.schedule(target, time, kind, None if payload is None else payload.tobytes())
    return 0


def schedule_values(ctx, target: int, time: float, kind: int, dtype, *values) -> int:
    """``schedule`` with a payload built from ``values``, without allocating.

    ``dtype`` is the payload record (``payload_dtype``, a module constant);
    ``values`` fill its fields in order (fields left out are zero). Compiled,
    the record is built on the stack: no array per event, unlike
    ``p = np.zeros(1, PAYLOAD)`` (an allocation that costs more than the event
    itself in a small handler). The fields must be scalars. Returns 0.
    """
    names = dtype.names or ()
    if len(values) > len(names):
        raise ValueError(
            f"schedule_values: {len(values)} values for the {len(names)} fields of {dtype}"
        )
    record = np.zeros(1, dtype)
    for name, value in zip(names, values):
        record[0][name] = value
    ctx.context.schedule(target, time, kind, record.tobytes())
    return 0


def popcount(x) -> int:
    """Number of set bits of an unsigned integer."""
    return int(x).bit_count()


def lowest_zero_bit(x) -> int:
    """Index of the lowest clear bit of an unsigned 64-bit integer (64 if none)."""
    inverted = ~int(x) & 0xFFFFFFFFFFFFFFFF
    return (inverted & -inverted).bit_length() - 1 if inverted else 64
