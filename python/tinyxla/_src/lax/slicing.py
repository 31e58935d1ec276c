"""The dynamic slicing primitives: ``dynamic_slice`` and ``dynamic_update_slice``.

Mirrors ``jax._src.lax.slicing``. Start indices are scalar integer operands, read when the
kernel runs (eagerly too: no host round trip) and clamped, as XLA does, so that the window
fits inside the operand. The public functions wrap negative indices first.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src.array import Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax.lax import (
    _colocated, _const, _convert_element_type, _dtype, _operand, _reject, _result, _shape, add,
    bitwise_and, broadcast_in_dim, broadcasted_iota, canonicalize_shape, clamp, eq, full, ge,
    lt, pad, reduce_or, reduce_sum, select, sub)


def _check_start_indices(name: str, start_indices: Sequence[Any]) -> None:
    if any(i.shape != () for i in start_indices):
        raise TypeError(f"start_indices arguments to {name} must be scalars, "
                        f" got indices {start_indices}")
    if any(i.dtype != start_indices[0].dtype or not dtypes.issubdtype(i.dtype, np.integer)
           for i in start_indices):
        raise TypeError(f"index arguments to {name} must be integers of the same type, "
                        f"got: {', '.join(i.dtype.name for i in start_indices)}")


def _run(prim: Primitive, args: Sequence[Any], params: dict, call: Any) -> Array:
    """An impl's ``_core`` call on ``args`` as Arrays; rejected operands raise the
    abstract-eval rule's JAX error, operands on other devices are moved first."""
    xs = [a if type(a) is Array else _operand(prim, k, a) for k, a in enumerate(args)]
    try:
        out = call(*[x._h for x in xs])
    except (TypeError, ValueError, IndexError) as e:
        moved = _colocated(prim, xs)
        if moved is not None:
            return _run(prim, moved, params, call)
        _reject(prim, xs, params, e)
        raise
    return _result(out, xs[0].weak_type, xs[0].dtype, xs)


# ---------------------------------------------------------------------------------------
# dynamic_slice

def _dynamic_slice_abstract_eval(operand: Any, *start_indices: Any,
                                 slice_sizes: tuple[int, ...]) -> ShapedArray:
    if len(start_indices) != len(operand.shape):
        raise TypeError("dynamic_slice start_indices must have length equal to the number "
                        f"of dimensions of the operand, got {len(start_indices)} indices for "
                        f"operand shape {operand.shape}.")
    if len(slice_sizes) != len(operand.shape):
        raise TypeError("dynamic_slice slice_sizes must have the same length as "
                        f"start_indices, got {slice_sizes} for operand shape {operand.shape}.")
    if not all(map(operator.ge, operand.shape, slice_sizes)):
        raise TypeError("slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
    if not all(ssz >= 0 for ssz in slice_sizes):
        raise TypeError("slice slice_sizes must be greater than or equal to zero, got "
                        f"slice_sizes of {slice_sizes}.")
    _check_start_indices("dynamic_slice", start_indices)
    return ShapedArray(tuple(slice_sizes), operand.dtype, operand.weak_type)


def _dynamic_slice_impl(operand: Any, *start_indices: Any, slice_sizes: tuple[int, ...]) -> Array:
    return _run(dynamic_slice_p, (operand, *start_indices), {"slice_sizes": slice_sizes},
                lambda x, *idx: _core.dynamic_slice(x, list(idx), list(slice_sizes)))


dynamic_slice_p = Primitive('dynamic_slice')
dynamic_slice_p.def_abstract_eval(_dynamic_slice_abstract_eval)
dynamic_slice_p.def_impl(_dynamic_slice_impl)
register_lowering(dynamic_slice_p, lambda ctx, x, *starts, slice_sizes:
                  ctx.builder.dynamic_slice(x, list(starts), list(slice_sizes)))


def _dynamic_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                       slice_sizes: tuple[int, ...]) -> tuple[Any, Any]:
    operand, *starts = primals
    out = dynamic_slice_p.bind(operand, *starts, slice_sizes=slice_sizes)
    t = tangents[0]
    if type(t) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, dynamic_slice_p.bind(t, *starts, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct: Any, operand: Any, *starts: Any,
                             slice_sizes: tuple[int, ...]) -> list[Any]:
    """Zeros with ``ct`` written at the (clamped) start, as JAX."""
    zeros = full(operand.aval.shape, 0, operand.aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


ad.primitive_jvps[dynamic_slice_p] = _dynamic_slice_jvp
ad.primitive_transposes[dynamic_slice_p] = _dynamic_slice_transpose


def _dynamic_slice_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                              slice_sizes: tuple[int, ...]) -> tuple[Any, int]:
    """Unbatched start indices: one dynamic_slice taking the whole batch axis. Batched
    ones (JAX makes a gather): the other axes are sliced first, then each such axis picks
    its window with a one-hot mask."""
    operand, *starts = vals
    operand_bdim, *start_bdims = dims
    size = batching.batch_size(vals, dims)
    operand = batching.bdim_at_front(operand, operand_bdim, size)
    index_dtype = _dtype(starts[0]) if starts else dtypes.int32
    zero = _convert_element_type(0, index_dtype)
    sizes = [s if d is None else n
             for s, d, n in zip(slice_sizes, start_bdims, operand.shape[1:])]
    out = operand
    if tuple(sizes) != operand.shape[1:]:  # some unbatched index slices its axis
        firsts = [i if d is None else zero for i, d in zip(starts, start_bdims)]
        out = dynamic_slice_p.bind(operand, zero, *firsts, slice_sizes=(size, *sizes))
    for axis, (i, d, s) in enumerate(zip(starts, start_bdims, slice_sizes)):
        if d is not None:
            out = _batched_window(out, axis + 1, batching.moveaxis(i, d, 0), s)
    return out, 0


def _batched_window(x: Any, axis: int, start: Any, size: int) -> Any:
    """``x[b, ..., start[b]:start[b]+size, ...]`` along ``axis`` for each ``b``, with
    ``start`` clamped so the window fits, as dynamic_slice clamps."""
    n, dt = x.shape[axis], _dtype(start)
    batch = x.shape[0]
    start = clamp(_convert_element_type(0, dt), start, _convert_element_type(n - size, dt))
    pos = add(broadcast_in_dim(start, (batch, size), (0,)), broadcasted_iota(dt, (batch, size), 1))
    mask = eq(broadcast_in_dim(pos, (batch, size, n), (0, 1)),
              broadcasted_iota(dt, (batch, size, n), 2))
    moved = batching.moveaxis(x, axis, 1)
    rest = moved.shape[2:]
    shape = (batch, size, n, *rest)
    picked = select(broadcast_in_dim(mask, shape, (0, 1, 2)),
                    broadcast_in_dim(moved, shape, (0, *range(2, len(shape)))),
                    full(shape, 0, x.dtype))
    out = reduce_or(picked, (2,)) if x.dtype == np.bool_ else reduce_sum(picked, (2,))
    return batching.moveaxis(out, 1, axis)


batching.primitive_batchers[dynamic_slice_p] = _dynamic_slice_batch_rule


# ---------------------------------------------------------------------------------------
# dynamic_update_slice

def _dynamic_update_slice_abstract_eval(operand: Any, update: Any,
                                        *start_indices: Any) -> ShapedArray:
    if operand.ndim != update.ndim:
        raise TypeError("dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {update.shape} for operand shape {operand.shape}.")
    if len(start_indices) != operand.ndim:
        raise TypeError("dynamic_update_slice start_indices must have length equal to the "
                        f"rank of operand, got indices {start_indices} for operand shape "
                        f"{operand.shape}.")
    if not all(map(operator.ge, operand.shape, update.shape)):
        raise TypeError("dynamic_update_slice update shape must be smaller than operand "
                        f"shape, got update shape {update.shape} for operand shape "
                        f"{operand.shape}.")
    if operand.dtype != update.dtype:
        raise TypeError("lax.dynamic_update_slice requires arguments to have the same "
                        f"dtypes, got {operand.dtype.name}, {update.dtype.name}.")
    _check_start_indices("dynamic_update_slice", start_indices)
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _dynamic_update_slice_impl(operand: Any, update: Any, *start_indices: Any) -> Array:
    return _run(dynamic_update_slice_p, (operand, update, *start_indices), {},
                lambda x, u, *idx: _core.dynamic_update_slice(x, u, list(idx)))


dynamic_update_slice_p = Primitive('dynamic_update_slice')
dynamic_update_slice_p.def_abstract_eval(_dynamic_update_slice_abstract_eval)
dynamic_update_slice_p.def_impl(_dynamic_update_slice_impl)
register_lowering(dynamic_update_slice_p, lambda ctx, x, update, *starts:
                  ctx.builder.dynamic_update_slice(x, update, list(starts)))


def _dynamic_update_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any]
                              ) -> tuple[Any, Any]:
    operand, update, *starts = primals
    out = dynamic_update_slice_p.bind(operand, update, *starts)
    t_operand, t_update = tangents[:2]
    if type(t_operand) is ad.Zero and type(t_update) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    t = dynamic_update_slice_p.bind(ad.instantiate_zeros(t_operand),
                                    ad.instantiate_zeros(t_update), *starts)
    return out, t


def _dynamic_update_slice_transpose(ct: Any, operand: Any, update: Any,
                                    *starts: Any) -> list[Any]:
    """The operand's cotangent is ``ct`` with the window zeroed, the update's is the
    window of ``ct`` (JAX's rule)."""
    update_shape = update.aval.shape if ad.is_undefined_primal(update) else _shape(update)
    operand_t = update_t = None
    if ad.is_undefined_primal(operand):
        zeros = full(update_shape, 0, _dtype(ct))
        operand_t = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if ad.is_undefined_primal(update):
        update_t = dynamic_slice_p.bind(ct, *starts, slice_sizes=tuple(update_shape))
    return [operand_t, update_t] + [None] * len(starts)


ad.primitive_jvps[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.primitive_transposes[dynamic_update_slice_p] = _dynamic_update_slice_transpose


def _dynamic_update_slice_batch_rule(vals: Sequence[Any], dims: Sequence[int | None]
                                     ) -> tuple[Any, int]:
    """Unbatched start indices: one dynamic_update_slice over the whole batch axis.
    Batched ones (JAX makes a scatter): the update, padded by the room on both sides of
    each axis, is windowed so that it lands at each member's start, then selected inside
    the window."""
    operand, update, *starts = vals
    operand_bdim, update_bdim, *start_bdims = dims
    size = batching.batch_size(vals, dims)
    operand = batching.bdim_at_front(operand, operand_bdim, size)
    update = batching.bdim_at_front(update, update_bdim, size)
    if all(d is None for d in start_bdims):
        zero = _convert_element_type(0, _dtype(starts[0]) if starts else dtypes.int32)
        return dynamic_update_slice_p.bind(operand, update, zero, *starts), 0
    shape, ushape = operand.shape[1:], update.shape[1:]
    rooms = [n - s for n, s in zip(shape, ushape)]
    dt = _dtype(starts[0])
    starts = [clamp(_convert_element_type(0, dt), batching.bdim_at_front(i, d, size),
                    _convert_element_type(r, dt))
              for i, d, r in zip(starts, start_bdims, rooms)]
    padded = pad(update, _const(update, 0), [(0, 0, 0)] + [(r, r, 0) for r in rooms])
    windows = [sub(_const(i, r), i) for i, r in zip(starts, rooms)]
    shifted, _ = _dynamic_slice_batch_rule(
        (padded, *windows), (0,) * (len(windows) + 1), slice_sizes=shape)
    full_shape = operand.shape
    inside = None
    for axis, (i, s) in enumerate(zip(starts, ushape)):
        pos = broadcasted_iota(dt, full_shape, axis + 1)
        lo = broadcast_in_dim(i, full_shape, (0,))
        hi = add(lo, _const(lo, s))
        here = bitwise_and(ge(pos, lo), lt(pos, hi))
        inside = here if inside is None else bitwise_and(inside, here)
    return select(inside, shifted, operand), 0


batching.primitive_batchers[dynamic_update_slice_p] = _dynamic_update_slice_batch_rule


# ---------------------------------------------------------------------------------------
# Public API

def _dynamic_slice_indices(operand_shape: tuple[int, ...], start_indices: Sequence[Any],
                           allow_negative_indices: bool | Sequence[bool]) -> list[Any]:
    """Start indices as scalar arrays, negative ones counted from the end (as JAX)."""
    if len(start_indices) != len(operand_shape):
        raise ValueError("Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {operand_shape})")
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = [allow_negative_indices] * len(start_indices)
    starts = []
    for i, d, allow_negative in zip(start_indices, operand_shape, allow_negative_indices):
        if isinstance(i, (int, np.integer)):
            if i < 0 and not allow_negative:
                raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                                 "allow_negative_indices=False")
            starts.append(_convert_element_type(i + d if i < 0 else i, _dtype(i)))
        elif allow_negative and not dtypes.issubdtype(_dtype(i), np.unsignedinteger):
            d_arr = _convert_element_type(d, _dtype(i))
            starts.append(select(lt(i, _convert_element_type(0, _dtype(i))), add(i, d_arr), i))
        else:
            starts.append(i)
    return starts


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Any, *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """The slice of ``slice_sizes`` at traced ``start_indices``, clamped to fit
    (``jax.lax.dynamic_slice``). Negative indices count from the end unless
    ``allow_negative_indices`` is False."""
    starts = _dynamic_slice_indices(_shape(operand), start_indices, allow_negative_indices)
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=canonicalize_shape(slice_sizes))


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand`` with ``update`` written at ``start_indices``, clamped so that it fits
    (``jax.lax.dynamic_update_slice``)."""
    starts = _dynamic_slice_indices(_shape(operand), start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0,
                         *, allow_negative_indices: bool = True) -> Any:
    """``dynamic_slice`` along one axis (``jax.lax.dynamic_slice_in_dim``)."""
    shape = _shape(operand)
    starts: list[Any] = [_const(start_index, 0) if not isinstance(start_index, int) else 0
                         for _ in shape]
    sizes = list(shape)
    starts[axis], sizes[axis] = start_index, int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True,
                         *, allow_negative_indices: bool = True) -> Any:
    """The slice of size 1 at ``index`` along ``axis`` (``jax.lax.dynamic_index_in_dim``)."""
    from tinyxla._src.lax.lax import squeeze
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int,
                                *, allow_negative_indices: bool = True) -> Any:
    """``dynamic_update_slice`` along one axis (``jax.lax.dynamic_update_slice_in_dim``)."""
    starts: list[Any] = [_const(start_index, 0) if not isinstance(start_index, int) else 0
                         for _ in _shape(operand)]
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int,
                                *, allow_negative_indices: bool = True) -> Any:
    """``dynamic_update_slice_in_dim`` of one index; ``update`` may lack the axis
    (``jax.lax.dynamic_update_index_in_dim``)."""
    from tinyxla._src.lax.lax import expand_dims
    if len(_shape(update)) == len(_shape(operand)) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)
