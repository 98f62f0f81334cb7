"""numba's side of ``cpp/src/handler_abi.h``: ``handler_api`` in compiled handlers.

Importing this module (numba required) makes every ``seer_env.handler_api``
function compile, in nopython code, to a direct call of the runtime's C
function of the same name (``seer_ctx_uniform``, ...), or, for the handler's
constants (``now``, ``self_id``, ``source``, ``num_entities``, ``lookahead``,
``dt``), to a load from the context's ``seer_ctx_header``. The calls go by symbol
name, resolved in each process from ``_core.handler_abi()``, so numba's
on-disk cache holds no addresses and stays valid across processes.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from seer_env import _core, handler_api

ABI_VERSION = 4  # SEER_HANDLER_ABI_VERSION of the header this module follows


def _register_symbols() -> None:
    table = _core.handler_abi()
    if table["version"] != ABI_VERSION:
        raise RuntimeError(
            f"seer_env._core speaks handler ABI {table['version']}, "
            f"seer_env.models.numba.abi speaks {ABI_VERSION}: reinstall seer_env"
        )
    for name, address in table.items():
        if name != "version":
            llvm.add_symbol(name, address)


_register_symbols()


def _external(name: str, restype, *argtypes):
    """An intrinsic calling the C function ``name`` (a symbol registered above)."""
    signature = restype(*argtypes)

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(
            context.get_value_type(restype), [context.get_value_type(t) for t in argtypes]
        )
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        return builder.call(fn, args)

    # intrinsic reads the arity from the Python signature.
    if len(argtypes) == 1:

        def typer(typingctx, a):
            return signature, codegen
    elif len(argtypes) == 2:

        def typer(typingctx, a, b):
            return signature, codegen
    else:

        def typer(typingctx, a, b, c, d, e, f):
            return signature, codegen

    typer.__name__ = name
    return intrinsic(typer)


def _header_field(offset: int, restype):
    """An intrinsic loading the field at ``offset`` of the context's ``seer_ctx_header``."""

    def codegen(context, builder, sig, args):
        at = builder.gep(args[0], [ir.Constant(ir.IntType(64), offset)])
        return builder.load(builder.bitcast(at, context.get_value_type(restype).as_pointer()))

    def typer(typingctx, ctx):
        return restype(ctx), codegen

    typer.__name__ = f"seer_ctx_header_{offset}"
    return intrinsic(typer)


_ptr = types.voidptr
# seer_ctx_header (handler_abi.h): read in place, no call.
_now = _header_field(0, types.float64)
_lookahead = _header_field(8, types.float64)
_dt = _header_field(16, types.float64)
_self = _header_field(24, types.uint32)
_source = _header_field(28, types.uint32)
_num_entities = _header_field(32, types.uint32)
_uniform = _external("seer_ctx_uniform", types.float64, _ptr)
_exponential = _external("seer_ctx_exponential", types.float64, _ptr, types.float64)
_below = _external("seer_ctx_below", types.uint64, _ptr, types.uint64)
_next_u64 = _external("seer_ctx_next_u64", types.uint64, _ptr)
_schedule = _external(
    "seer_ctx_schedule",
    types.int32,
    _ptr,
    types.uint32,
    types.float64,
    types.uint32,
    _ptr,
    types.uint64,
)
_request_decision = _external("seer_ctx_request_decision", types.int32, _ptr)


@intrinsic
def stop_requested(typingctx):
    """``seer_handler_stop_requested()``: the step on this thread was asked to stop."""

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(32), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "seer_handler_stop_requested")
        return builder.icmp_unsigned("!=", builder.call(fn, []), ir.Constant(ir.IntType(32), 0))

    return types.boolean(), codegen


@intrinsic
def _record_address(typingctx, record):
    """The address of a record's bytes (numba passes records by reference)."""

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], cgutils.voidptr_t)

    return types.voidptr(record), codegen


@intrinsic
def _null(typingctx):
    def codegen(context, builder, sig, args):
        return cgutils.voidptr_t(None)

    return types.voidptr(), codegen


@intrinsic
def _ctpop(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])

    return x(x), codegen


@intrinsic
def _cttz(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return x(x), codegen


def _is_ctx(ctx) -> bool:
    return isinstance(ctx, types.RawPointer)


@overload(handler_api.now)
def _ol_now(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _now(ctx)
    return None


@overload(handler_api.self_id)
def _ol_self_id(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _self(ctx)
    return None


@overload(handler_api.source)
def _ol_source(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _source(ctx)
    return None


@overload(handler_api.num_entities)
def _ol_num_entities(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _num_entities(ctx)
    return None


@overload(handler_api.lookahead)
def _ol_lookahead(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _lookahead(ctx)
    return None


@overload(handler_api.dt)
def _ol_dt(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _dt(ctx)
    return None


@overload(handler_api.uniform)
def _ol_uniform(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _uniform(ctx)
    return None


@overload(handler_api.exponential)
def _ol_exponential(ctx, mean):
    if _is_ctx(ctx):
        return lambda ctx, mean: _exponential(ctx, np.float64(mean))
    return None


@overload(handler_api.below)
def _ol_below(ctx, n):
    if _is_ctx(ctx):
        return lambda ctx, n: _below(ctx, np.uint64(n))
    return None


@overload(handler_api.next_u64)
def _ol_next_u64(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _next_u64(ctx)
    return None


@overload(handler_api.request_decision)
def _ol_request_decision(ctx):
    if _is_ctx(ctx):
        return lambda ctx: _request_decision(ctx)
    return None


@overload(handler_api.schedule)
def _ol_schedule(ctx, target, time, kind, payload=None):
    if not _is_ctx(ctx):
        return None
    if payload is None or isinstance(payload, (types.NoneType, types.Omitted)):

        def impl(ctx, target, time, kind, payload=None):
            return _schedule(
                ctx, np.uint32(target), np.float64(time), np.uint32(kind), _null(), np.uint64(0)
            )

        return impl
    if isinstance(payload, types.Record):
        size = payload.size

        def impl(ctx, target, time, kind, payload=None):
            return _schedule(
                ctx,
                np.uint32(target),
                np.float64(time),
                np.uint32(kind),
                _record_address(payload),
                np.uint64(size),
            )

        return impl
    if (
        isinstance(payload, types.Array)
        and payload.ndim == 1
        and isinstance(payload.dtype, types.Record)
    ):
        # A one-record array: the array is an argument of this call, so numba
        # keeps it (and its record's bytes) alive until the runtime has copied them.
        size = payload.dtype.size

        def impl(ctx, target, time, kind, payload=None):
            if payload.shape[0] != 1:
                raise ValueError("schedule: a payload array must hold exactly one record")
            return _schedule(
                ctx,
                np.uint32(target),
                np.float64(time),
                np.uint32(kind),
                _record_address(payload[0]),
                np.uint64(size),
            )

        return impl
    raise TypeError(
        "schedule: payload must be a record (payload_dtype), an array of one record, or None, "
        f"got {payload}"
    )


@intrinsic
def _schedule_packed(typingctx, ctx, target, time, kind, dtype, values):
    """``seer_ctx_schedule`` with a payload record packed from ``values`` on the stack."""
    if not isinstance(dtype, types.DType) or not isinstance(dtype.dtype, types.Record):
        return None
    record = dtype.dtype
    members = list(record.members)
    if not isinstance(values, types.BaseTuple) or len(values) > len(members):
        return None
    for (name, ftype), vtype in zip(members, values):
        if not isinstance(ftype, (types.Number, types.Boolean)) or not isinstance(
            vtype, (types.Number, types.Boolean)
        ):
            raise TypeError(
                f"schedule_values: field {name!r} ({ftype}) takes a number, not {vtype}"
            )

    def codegen(context, builder, sig, args):
        ctx_v, target_v, time_v, kind_v, _, values_v = args
        size = record.size
        buffer = cgutils.alloca_once(builder, ir.IntType(8), size=size)  # in the entry block
        cgutils.memset(builder, buffer, ir.Constant(ir.IntType(64), size), 0)
        for i, ((name, ftype), vtype) in enumerate(zip(members, sig.args[5])):
            value = context.cast(builder, builder.extract_value(values_v, i), vtype, ftype)
            at = builder.gep(buffer, [ir.Constant(ir.IntType(64), record.offset(name))])
            at = builder.bitcast(at, context.get_value_type(ftype).as_pointer())
            builder.store(value, at, align=1)
        fnty = ir.FunctionType(
            ir.IntType(32),
            [cgutils.voidptr_t, ir.IntType(32), ir.DoubleType(), ir.IntType(32)]
            + [cgutils.voidptr_t, ir.IntType(64)],
        )
        fn = cgutils.get_or_insert_function(builder.module, fnty, "seer_ctx_schedule")
        pointer = builder.bitcast(buffer, cgutils.voidptr_t)
        return builder.call(
            fn, [ctx_v, target_v, time_v, kind_v, pointer, ir.Constant(ir.IntType(64), size)]
        )

    return types.int32(ctx, target, time, kind, dtype, values), codegen


@overload(handler_api.schedule_values)
def _ol_schedule_values(ctx, target, time, kind, dtype, *values):
    if not _is_ctx(ctx):
        return None

    def impl(ctx, target, time, kind, dtype, *values):
        return _schedule_packed(
            ctx, np.uint32(target), np.float64(time), np.uint32(kind), dtype, values
        )

    return impl


@overload(handler_api.popcount)
def _ol_popcount(x):
    if isinstance(x, types.Integer):
        return lambda x: np.int64(_ctpop(np.uint64(x)))
    return None


@overload(handler_api.lowest_zero_bit)
def _ol_lowest_zero_bit(x):
    if isinstance(x, types.Integer):
        return lambda x: np.int64(_cttz(~np.uint64(x)))
    return None
