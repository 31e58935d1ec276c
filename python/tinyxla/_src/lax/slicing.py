"""The slicing primitives: ``dynamic_slice``, ``dynamic_update_slice``, ``gather`` and the
scatters (``scatter``, ``scatter-add``, ``scatter-mul``, ``scatter-min``, ``scatter-max``).

Mirrors ``jax._src.lax.slicing``. Start indices are integer operands read when the kernel
runs (eagerly too: no host round trip). Dynamic slices clamp, as XLA does, so that the
window fits inside the operand; gathers and scatters follow their GatherScatterMode.
The dynamic-slice public functions wrap negative indices first; gather/scatter do not.
"""
from __future__ import annotations

import enum
import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src.array import Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax.conversion import _const, _convert_element_type, convert_element_type
from tinyxla._src.lax.eager import _colocated, _operand, _reject, _result
from tinyxla._src.lax.elementwise import add, div, eq, lt, mul, select
from tinyxla._src.lax.shape_ops import (
    broadcast_in_dim, concatenate, expand_dims, full, iota, reshape, squeeze)
from tinyxla._src.lax.type_rules import _dtype, _shape, canonicalize_shape


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
    ones: a gather of one window per member, clamped as dynamic_slice clamps (JAX's
    rule)."""
    operand, *starts = vals
    operand_bdim, *start_bdims = dims
    size = batching.batch_size(vals, dims)
    operand = batching.bdim_at_front(operand, operand_bdim, size)
    index_dtype = _dtype(starts[0]) if starts else dtypes.int32
    if all(d is None for d in start_bdims):
        zero = _convert_element_type(0, index_dtype)
        return dynamic_slice_p.bind(operand, zero, *starts,
                                    slice_sizes=(size, *slice_sizes)), 0
    rank = len(slice_sizes)
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, rank + 1)),
                                   collapsed_slice_dims=(),
                                   start_index_map=tuple(range(1, rank + 1)),
                                   operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    return gather_p.bind(operand, _batched_starts(starts, start_bdims, size), dimension_numbers=dnums,
                         slice_sizes=(1, *slice_sizes), unique_indices=False,
                         indices_are_sorted=False, mode=GatherScatterMode.CLIP,
                         fill_value=None), 0


def _batched_starts(starts: Sequence[Any], bdims: Sequence[int | None], size: int) -> Any:
    """The (size, len(starts)) index array of per-member start vectors."""
    cols = [reshape(batching.bdim_at_front(i, d, size), (size, 1)) for i, d in zip(starts, bdims)]
    return concatenate(cols, 1) if cols else full((size, 0), 0, dtypes.int32)


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
    Batched ones: a scatter of one window per member, clamped as dynamic_update_slice
    clamps (JAX's rule)."""
    operand, update, *starts = vals
    operand_bdim, update_bdim, *start_bdims = dims
    size = batching.batch_size(vals, dims)
    operand = batching.bdim_at_front(operand, operand_bdim, size)
    update = batching.bdim_at_front(update, update_bdim, size)
    if all(d is None for d in start_bdims):
        zero = _convert_element_type(0, _dtype(starts[0]) if starts else dtypes.int32)
        return dynamic_update_slice_p.bind(operand, update, zero, *starts), 0
    rank = len(starts)
    dnums = ScatterDimensionNumbers(update_window_dims=tuple(range(1, rank + 1)),
                                    inserted_window_dims=(),
                                    scatter_dims_to_operand_dims=tuple(range(1, rank + 1)),
                                    operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
    return scatter_p.bind(operand, _batched_starts(starts, start_bdims, size), update,
                          dimension_numbers=dnums, indices_are_sorted=True, unique_indices=True,
                          mode=GatherScatterMode.CLIP), 0


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
    if len(_shape(update)) == len(_shape(operand)) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# ---------------------------------------------------------------------------------------
# gather and scatter

class GatherDimensionNumbers(NamedTuple):
    """Describes a gather (``jax.lax.GatherDimensionNumbers``): ``offset_dims`` are the
    result dims of the window, ``collapsed_slice_dims`` the operand dims the window drops
    (size 1), ``start_index_map`` the operand dim each index component starts, and the
    batching dims pair operand dims with index dims that select by position."""
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """Describes a scatter (``jax.lax.ScatterDimensionNumbers``), the inverse of a gather:
    ``update_window_dims`` are the updates' window dims, ``inserted_window_dims`` the
    operand dims the window lacks and ``scatter_dims_to_operand_dims`` the operand dim each
    index component starts."""
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What happens to windows that do not fit (``jax.lax.GatherScatterMode``): CLIP clamps
    their start; FILL_OR_DROP fills a gathered window with the fill value and drops a
    scattered one; PROMISE_IN_BOUNDS lets the implementation choose (here: a gather clamps,
    a scatter drops, as XLA on CPU). ONE_HOT is not implemented."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


_CLIP, _FILL_OR_DROP = 0, 1  # the C++ IndexMode codes


def _gather_mode_code(mode: GatherScatterMode) -> int:
    if mode == GatherScatterMode.ONE_HOT:
        raise NotImplementedError("tinyxla does not implement GatherScatterMode.ONE_HOT")
    return _FILL_OR_DROP if mode == GatherScatterMode.FILL_OR_DROP else _CLIP


def _scatter_mode_code(mode: GatherScatterMode) -> int:
    if mode == GatherScatterMode.ONE_HOT:
        raise NotImplementedError("tinyxla does not implement GatherScatterMode.ONE_HOT")
    return _CLIP if mode == GatherScatterMode.CLIP else _FILL_OR_DROP


def _default_fill_value(dtype: np.dtype) -> Any:
    """JAX's fill for out-of-bounds gathers: NaN, the signed minimum, the unsigned
    maximum, or True."""
    if dtypes.issubdtype(dtype, np.inexact):
        return np.nan
    if dtypes.issubdtype(dtype, np.signedinteger):
        return int(np.iinfo(dtype).min)
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        return int(np.iinfo(dtype).max)
    return True


def _check_index_dtype(indices: Any) -> None:
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise ValueError("indices must have an integer type")


def _window_dims(rank: int, *excluded: Sequence[int]) -> list[int]:
    out = set().union(*map(set, excluded))
    return [d for d in range(rank) if d not in out]


def _gather_shape(operand: Any, indices: Any, dnums: GatherDimensionNumbers,
                  slice_sizes: tuple[int, ...]) -> tuple[int, ...]:
    _check_index_dtype(indices)
    shape, ishape = operand.shape, indices.shape
    if len(ishape) == 0:
        raise TypeError("gather indices must have at least one dimension")
    if ishape[-1] != len(dnums.start_index_map):
        raise TypeError("Gather op has start_index_map of length "
                        f"{len(dnums.start_index_map)}, which must equal the size of the "
                        f"index vector dimension of the indices, {ishape[-1]}.")
    if len(slice_sizes) != len(shape):
        raise TypeError("Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={len(shape)}")
    for i, (s, d) in enumerate(zip(slice_sizes, shape)):
        if not 0 <= s <= d:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                            f"within [0, {d} + 1), got {s}.")
    for i in dnums.collapsed_slice_dims:
        if slice_sizes[i] > 1:
            raise TypeError("Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {slice_sizes[i]} for index {i} at position "
                            f"{dnums.collapsed_slice_dims.index(i)}.")
    window = _window_dims(len(shape), dnums.collapsed_slice_dims, dnums.operand_batching_dims)
    if len(window) != len(dnums.offset_dims):
        raise TypeError("All components of the offset index in a gather op must either be a "
                        "offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes="
                        f"{tuple(slice_sizes[d] for d in window)}, collapsed_slice_dims="
                        f"{dnums.collapsed_slice_dims}, operand_batching_dims="
                        f"{dnums.operand_batching_dims}.")
    rank = len(ishape) - 1 + len(dnums.offset_dims)
    batch = iter(ishape[:-1])
    sizes = iter(slice_sizes[d] for d in window)
    return tuple(next(sizes) if i in dnums.offset_dims else next(batch) for i in range(rank))


def _gather_abstract_eval(operand: Any, indices: Any, *, dimension_numbers: GatherDimensionNumbers,
                          slice_sizes: tuple[int, ...], unique_indices: bool,
                          indices_are_sorted: bool, mode: GatherScatterMode,
                          fill_value: Any) -> ShapedArray:
    shape = _gather_shape(operand, indices, dimension_numbers, slice_sizes)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_fill(mode: GatherScatterMode, fill_value: Any, dtype: np.dtype) -> Any:
    if mode != GatherScatterMode.FILL_OR_DROP:
        return None
    return _default_fill_value(dtype) if fill_value is None else fill_value


def _gather_impl(operand: Any, indices: Any, *, dimension_numbers: GatherDimensionNumbers,
                 slice_sizes: tuple[int, ...], unique_indices: bool, indices_are_sorted: bool,
                 mode: GatherScatterMode, fill_value: Any) -> Array:
    d = dimension_numbers
    params = dict(dimension_numbers=d, slice_sizes=slice_sizes, unique_indices=unique_indices,
                  indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value)
    code = _gather_mode_code(mode)
    fill = _gather_fill(mode, fill_value, _dtype(operand))

    def call(x: Any, i: Any) -> Any:
        return _core.gather(x, i, list(d.offset_dims), list(d.collapsed_slice_dims),
                            list(d.start_index_map), list(d.operand_batching_dims),
                            list(d.start_indices_batching_dims), list(slice_sizes), code, fill)
    return _run(gather_p, (operand, indices), params, call)


def _gather_lowering(ctx: Any, x: int, indices: int, *, dimension_numbers: GatherDimensionNumbers,
                     slice_sizes: tuple[int, ...], unique_indices: bool,
                     indices_are_sorted: bool, mode: GatherScatterMode, fill_value: Any) -> int:
    d = dimension_numbers
    dtype = ctx.avals_in[0].dtype
    fill = _gather_fill(mode, fill_value, dtype)
    return ctx.builder.gather(x, indices, list(d.offset_dims), list(d.collapsed_slice_dims),
                              list(d.start_index_map), list(d.operand_batching_dims),
                              list(d.start_indices_batching_dims), list(slice_sizes),
                              _gather_mode_code(mode),
                              -1 if fill is None else ctx.scalar(fill, dtype))


gather_p = Primitive('gather')
gather_p.def_abstract_eval(_gather_abstract_eval)
gather_p.def_impl(_gather_impl)
register_lowering(gather_p, _gather_lowering)


def _gather_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
                ) -> tuple[Any, Any]:
    operand, indices = primals
    out = gather_p.bind(operand, indices, **params)
    t = tangents[0]
    if type(t) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    # Filled slots are constants: their tangent is 0 (JAX's rule).
    return out, gather_p.bind(t, indices, **dict(params, fill_value=0))


def _gather_to_scatter_dnums(d: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        update_window_dims=d.offset_dims, inserted_window_dims=d.collapsed_slice_dims,
        scatter_dims_to_operand_dims=d.start_index_map,
        operand_batching_dims=d.operand_batching_dims,
        scatter_indices_batching_dims=d.start_indices_batching_dims)


def _scatter_to_gather(d: ScatterDimensionNumbers, operand_rank: int,
                       updates_shape: tuple[int, ...]
                       ) -> tuple[GatherDimensionNumbers, tuple[int, ...]]:
    """The gather that reads what a scatter writes: its dimension numbers and slice
    sizes."""
    dnums = GatherDimensionNumbers(
        offset_dims=d.update_window_dims, collapsed_slice_dims=d.inserted_window_dims,
        start_index_map=d.scatter_dims_to_operand_dims,
        operand_batching_dims=d.operand_batching_dims,
        start_indices_batching_dims=d.scatter_indices_batching_dims)
    sizes, pos = [], 0
    for i in range(operand_rank):
        if i in d.inserted_window_dims or i in d.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(updates_shape[d.update_window_dims[pos]])
            pos += 1
    return dnums, tuple(sizes)


def _gather_transpose(ct: Any, operand: Any, indices: Any, *,
                      dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                      unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
                      fill_value: Any) -> list[Any]:
    """A scatter_add of the cotangent into zeros (JAX's rule)."""
    zeros = full(operand.aval.shape, 0, _dtype(ct))
    out = scatter_add_p.bind(zeros, indices, ct,
                             dimension_numbers=_gather_to_scatter_dnums(dimension_numbers),
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode)
    return [out, None]


ad.primitive_jvps[gather_p] = _gather_jvp
ad.primitive_transposes[gather_p] = _gather_transpose


def _gather_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                       dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                       unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
                       fill_value: Any) -> tuple[Any, int]:
    """JAX's rule: a batched operand gets a full window along its batch axis, batched
    indices an extra batch dim, and both batched become a batching dim pair."""
    operand, indices = vals
    operand_bdim, indices_bdim = dims
    d = dimension_numbers
    up = lambda ds: tuple(i + 1 for i in ds)
    params = dict(unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                  mode=mode, fill_value=fill_value)
    if indices_bdim is None:
        operand = batching.moveaxis(operand, operand_bdim, 0)
        dnums = GatherDimensionNumbers(
            offset_dims=(0, *up(d.offset_dims)), collapsed_slice_dims=up(d.collapsed_slice_dims),
            start_index_map=up(d.start_index_map),
            operand_batching_dims=up(d.operand_batching_dims),
            start_indices_batching_dims=d.start_indices_batching_dims)
        return gather_p.bind(operand, indices, dimension_numbers=dnums,
                             slice_sizes=(operand.shape[0], *slice_sizes), **params), 0
    indices = batching.moveaxis(indices, indices_bdim, 0)
    params.update(unique_indices=False, indices_are_sorted=False)
    if operand_bdim is None:
        dnums = GatherDimensionNumbers(
            offset_dims=up(d.offset_dims), collapsed_slice_dims=d.collapsed_slice_dims,
            start_index_map=d.start_index_map, operand_batching_dims=d.operand_batching_dims,
            start_indices_batching_dims=up(d.start_indices_batching_dims))
        return gather_p.bind(operand, indices, dimension_numbers=dnums,
                             slice_sizes=slice_sizes, **params), 0
    operand = batching.moveaxis(operand, operand_bdim, 0)
    dnums = GatherDimensionNumbers(
        offset_dims=up(d.offset_dims), collapsed_slice_dims=up(d.collapsed_slice_dims),
        start_index_map=up(d.start_index_map),
        operand_batching_dims=(0, *up(d.operand_batching_dims)),
        start_indices_batching_dims=(0, *up(d.start_indices_batching_dims)))
    return gather_p.bind(operand, indices, dimension_numbers=dnums,
                         slice_sizes=(1, *slice_sizes), **params), 0


batching.primitive_batchers[gather_p] = _gather_batch_rule


def _scatter_abstract_eval(operand: Any, indices: Any, updates: Any, *,
                           dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                           unique_indices: bool, mode: GatherScatterMode) -> ShapedArray:
    _check_index_dtype(indices)
    if operand.dtype != updates.dtype:
        raise TypeError("lax.scatter requires arguments to have the same dtypes, got "
                        f"{operand.dtype.name}, {updates.dtype.name}.")
    d = dimension_numbers
    ishape, ushape = indices.shape, updates.shape
    if len(ishape) == 0 or ishape[-1] != len(d.scatter_dims_to_operand_dims):
        raise TypeError("Scatter op has scatter_dims_to_operand_dims of length "
                        f"{len(d.scatter_dims_to_operand_dims)}, which must equal the size of "
                        "the index vector dimension of the indices.")
    if len(ushape) != len(d.update_window_dims) + len(ishape) - 1:
        raise TypeError(f"Updates tensor must be of rank {len(d.update_window_dims) + len(ishape) - 1}; "
                        f"got {len(ushape)}.")
    window = _window_dims(len(operand.shape), d.inserted_window_dims, d.operand_batching_dims)
    if len(window) != len(d.update_window_dims):
        raise TypeError(f"Scatter op has window of size {len(d.update_window_dims)}; doesn't "
                        f"match operand of rank {len(operand.shape)}.")
    scatter_dims = [i for i in range(len(ushape)) if i not in d.update_window_dims]
    for k, (u, w) in enumerate(zip(d.update_window_dims, window)):
        if ushape[u] > operand.shape[w]:
            raise TypeError("Bounds of the window dimensions of updates must not exceed the "
                            "bounds of the corresponding dimensions of operand. For dimension "
                            f"{u}, updates bound is {ushape[u]}, operand bound is "
                            f"{operand.shape[w]}.")
    for k, u in enumerate(scatter_dims):
        if ushape[u] != ishape[k]:
            raise TypeError("Bounds of the scatter dimensions of updates must be the same as "
                            "the bounds of the corresponding dimensions of scatter indices. "
                            f"For scatter dimension {k}, updates bound is {ushape[u]}, "
                            f"indices bound is {ishape[k]}.")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


_SCATTER_OP = {name: i for i, name in enumerate(_core.SCATTER_OPS)}


def _scatter_primitive(name: str, op: str) -> Primitive:
    """A scatter primitive combining updates with ``op`` (set, add, mul, min or max)."""
    prim = Primitive(name)
    code = _SCATTER_OP[op]

    def impl(operand: Any, indices: Any, updates: Any, *,
             dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
             unique_indices: bool, mode: GatherScatterMode) -> Array:
        d = dimension_numbers
        params = dict(dimension_numbers=d, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=mode)
        mode_code = _scatter_mode_code(mode)
        return _run(prim, (operand, indices, updates), params, lambda x, i, u: _core.scatter(
            code, x, i, u, list(d.update_window_dims), list(d.inserted_window_dims),
            list(d.scatter_dims_to_operand_dims), list(d.operand_batching_dims),
            list(d.scatter_indices_batching_dims), mode_code))

    def lower(ctx: Any, x: int, i: int, u: int, *, dimension_numbers: ScatterDimensionNumbers,
              indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode) -> int:
        d = dimension_numbers
        return ctx.builder.scatter(code, x, i, u, list(d.update_window_dims),
                                   list(d.inserted_window_dims),
                                   list(d.scatter_dims_to_operand_dims),
                                   list(d.operand_batching_dims),
                                   list(d.scatter_indices_batching_dims),
                                   _scatter_mode_code(mode))

    prim.def_abstract_eval(_scatter_abstract_eval)
    prim.def_impl(impl)
    register_lowering(prim, lower)
    batching.primitive_batchers[prim] = lambda vals, dims, **params: _scatter_batch_rule(
        prim, vals, dims, **params)
    return prim


scatter_p = _scatter_primitive('scatter', 'set')
scatter_add_p = _scatter_primitive('scatter-add', 'add')
scatter_mul_p = _scatter_primitive('scatter-mul', 'mul')
scatter_min_p = _scatter_primitive('scatter-min', 'min')
scatter_max_p = _scatter_primitive('scatter-max', 'max')


def _scatter_batch_rule(prim: Primitive, vals: Sequence[Any], dims: Sequence[int | None], *,
                        dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                        unique_indices: bool, mode: GatherScatterMode) -> tuple[Any, int]:
    """JAX's rule: operand and updates get the batch axis in front; unbatched indices
    scatter a window spanning it, batched ones pair it as a batching dim."""
    operand, indices, updates = vals
    operand_bdim, indices_bdim, updates_bdim = dims
    size = batching.batch_size(vals, dims)
    operand = batching.bdim_at_front(operand, operand_bdim, size)
    updates = batching.bdim_at_front(updates, updates_bdim, size)
    d = dimension_numbers
    up = lambda ds: tuple(i + 1 for i in ds)
    if indices_bdim is None:
        dnums = ScatterDimensionNumbers(
            update_window_dims=(0, *up(d.update_window_dims)),
            inserted_window_dims=up(d.inserted_window_dims),
            scatter_dims_to_operand_dims=up(d.scatter_dims_to_operand_dims),
            operand_batching_dims=up(d.operand_batching_dims),
            scatter_indices_batching_dims=d.scatter_indices_batching_dims)
    else:
        indices = batching.bdim_at_front(indices, indices_bdim, size)
        dnums = ScatterDimensionNumbers(
            update_window_dims=up(d.update_window_dims),
            inserted_window_dims=up(d.inserted_window_dims),
            scatter_dims_to_operand_dims=up(d.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *up(d.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *up(d.scatter_indices_batching_dims)))
    return prim.bind(operand, indices, updates, dimension_numbers=dnums,
                     indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                     mode=mode), 0


def _scatter_gather(ct: Any, indices: Any, updates_shape: tuple[int, ...],
                    d: ScatterDimensionNumbers, mode: GatherScatterMode) -> Any:
    """The windows of ``ct`` a scatter with ``d`` writes (zero where it drops them)."""
    dnums, sizes = _scatter_to_gather(d, len(_shape(ct)), updates_shape)
    return gather_p.bind(ct, indices, dimension_numbers=dnums, slice_sizes=sizes,
                         unique_indices=False, indices_are_sorted=False, mode=mode,
                         fill_value=0)


def _updates_shape(updates: Any) -> tuple[int, ...]:
    return updates.aval.shape if ad.is_undefined_primal(updates) else _shape(updates)


def _scatter_add_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
                     ) -> tuple[Any, Any]:
    operand, indices, updates = primals
    out = scatter_add_p.bind(operand, indices, updates, **params)
    g_operand, _, g_updates = tangents
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, scatter_add_p.bind(ad.instantiate_zeros(g_operand), indices,
                                   ad.instantiate_zeros(g_updates), **params)


def _scatter_add_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                           dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                           unique_indices: bool, mode: GatherScatterMode) -> list[Any]:
    operand_t = ct if ad.is_undefined_primal(operand) else None
    update_t = None
    if ad.is_undefined_primal(updates):
        update_t = _scatter_gather(ct, indices, _updates_shape(updates), dimension_numbers, mode)
    return [operand_t, None, update_t]


ad.primitive_jvps[scatter_add_p] = _scatter_add_jvp
ad.primitive_transposes[scatter_add_p] = _scatter_add_transpose


def _scatter_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                 dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                 unique_indices: bool, mode: GatherScatterMode) -> tuple[Any, Any]:
    """With unique indices the tangent is scattered like the primal. Otherwise (JAX's
    rule) each update gets an id; scattering the ids tells which update won each slot,
    and the winners' values and tangents are scatter-added into the operand with the
    overwritten slots zeroed, which is linear."""
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    params = dict(dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode)
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, ad.Zero.from_primal_value(out)
    g_operand, g_updates = ad.instantiate_zeros(g_operand), ad.instantiate_zeros(g_updates)
    if unique_indices:
        return (scatter_p.bind(operand, indices, updates, **params),
                scatter_p.bind(g_operand, indices, g_updates, **params))
    ushape = _shape(updates)
    d = dimension_numbers
    scatter_dims = [i for i in range(len(ushape)) if i not in d.update_window_dims]
    ids_shape = [1] * len(ushape)
    for i in scatter_dims:
        ids_shape[i] = ushape[i]
    num_ids = int(np.prod(ids_shape))
    id_dtype = dtypes.uint32 if num_ids + 1 < np.iinfo(np.uint32).max else dtypes.uint64
    ids = add(reshape(iota(id_dtype, num_ids), tuple(ids_shape)), _convert_element_type(1, id_dtype))
    update_ids = broadcast_in_dim(ids, ushape, tuple(range(len(ushape)))) \
        if tuple(ids_shape) != ushape else ids
    scattered_ids = scatter_p.bind(full(_shape(operand), 0, id_dtype), indices, update_ids,
                                   **params)
    gathered_ids = _scatter_gather(scattered_ids, indices, ushape, d, mode)
    masked_operand = select(eq(scattered_ids, _convert_element_type(0, id_dtype)), operand,
                            full(_shape(operand), 0, _dtype(operand)))
    won = eq(update_ids, gathered_ids)
    masked_updates = select(won, updates, full(ushape, 0, _dtype(updates)))
    masked_g_operand = select(eq(scattered_ids, _convert_element_type(0, id_dtype)), g_operand,
                              full(_shape(operand), 0, _dtype(g_operand)))
    masked_g_updates = select(won, g_updates, full(ushape, 0, _dtype(g_updates)))
    add_params = dict(params, mode=mode)
    return (scatter_add_p.bind(masked_operand, indices, masked_updates, **add_params),
            scatter_add_p.bind(masked_g_operand, indices, masked_g_updates, **add_params))


def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                       dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                       unique_indices: bool, mode: GatherScatterMode) -> list[Any]:
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    ushape = _updates_shape(updates)
    operand_t = update_t = None
    if ad.is_undefined_primal(operand):
        operand_t = scatter_p.bind(ct, indices, full(ushape, 0, _dtype(ct)),
                                   dimension_numbers=dimension_numbers,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=True, mode=mode)
    if ad.is_undefined_primal(updates):
        update_t = _scatter_gather(ct, indices, ushape, dimension_numbers, mode)
    return [operand_t, None, update_t]


ad.primitive_jvps[scatter_p] = _scatter_jvp
ad.primitive_transposes[scatter_p] = _scatter_transpose


def _scatter_mul_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
                     ) -> tuple[Any, Any]:
    """Linear in the operand; the updates' part needs unique indices (as in JAX)."""
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    t = None
    if type(g_operand) is not ad.Zero:
        t = scatter_mul_p.bind(g_operand, indices, updates, **params)
    if type(g_updates) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError("scatter_mul gradients are only implemented if "
                                      "`unique_indices=True`")
        zeros = full(_shape(operand), 0, _dtype(g_updates))
        t_u = mul(operand, scatter_add_p.bind(zeros, indices, g_updates, **params))
        t = t_u if t is None else add(t, t_u)
    return out, t


def _scatter_mul_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                           dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                           unique_indices: bool, mode: GatherScatterMode) -> list[Any]:
    if ad.is_undefined_primal(updates):
        raise NotImplementedError("scatter_mul is not linear in its updates")
    return [scatter_mul_p.bind(ct, indices, updates, dimension_numbers=dimension_numbers,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode), None, None]


ad.primitive_jvps[scatter_mul_p] = _scatter_mul_jvp
ad.primitive_transposes[scatter_mul_p] = _scatter_mul_transpose


def _scatter_extremal_jvp(prim: Primitive, primals: Sequence[Any], tangents: Sequence[Any],
                          **params: Any) -> tuple[Any, Any]:
    """JAX's rule: where several values tie for the extreme (the operand's and updates'),
    the tangent is the average of theirs."""
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    out = prim.bind(operand, indices, updates, **params)
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    g_operand, g_updates = ad.instantiate_zeros(g_operand), ad.instantiate_zeros(g_updates)
    d, mode = params["dimension_numbers"], params["mode"]
    ushape, dt = _shape(updates), _dtype(g_operand)
    successful = convert_element_type(eq(updates, _scatter_gather(out, indices, ushape, d, mode)), dt)
    retained = convert_element_type(eq(operand, out), dt)
    num_refs = add(scatter_add_p.bind(full(_shape(operand), 0, dt), indices, successful, **params),
                   retained)
    t_operand = div(mul(g_operand, retained), num_refs)
    # The coefficient is made from primals before it meets the tangent: dropped updates
    # read a NaN fill for their refs, and a tangent divided by it would transpose to NaN.
    coef = div(successful, _scatter_gather(num_refs, indices, ushape, d, mode))
    coef = select(eq(successful, _const(successful, 0)), full(ushape, 0, dt), coef)
    t_updates = mul(g_updates, coef)
    return out, add(t_operand, scatter_add_p.bind(full(_shape(operand), 0, dt), indices,
                                                  t_updates, **params))


ad.primitive_jvps[scatter_min_p] = lambda p, t, **kw: _scatter_extremal_jvp(scatter_min_p, p, t, **kw)
ad.primitive_jvps[scatter_max_p] = lambda p, t, **kw: _scatter_extremal_jvp(scatter_max_p, p, t, **kw)


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value: Any = None) -> Any:
    """XLA's gather (``jax.lax.gather``): one window of ``slice_sizes`` per index vector
    (the last dim of ``start_indices``). Mode None is PROMISE_IN_BOUNDS (clamps); the
    default fill of FILL_OR_DROP is NaN / the integer extreme / True."""
    parsed = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                        else mode)
    if fill_value is not None and parsed != GatherScatterMode.FILL_OR_DROP:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=dimension_numbers,
                         slice_sizes=canonicalize_shape(slice_sizes),
                         unique_indices=bool(unique_indices),
                         indices_are_sorted=bool(indices_are_sorted), mode=parsed,
                         fill_value=fill_value)


def _scatter_api(prim: Primitive, operand: Any, scatter_indices: Any, updates: Any,
                 dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                 unique_indices: bool, mode: Any) -> Any:
    return prim.bind(operand, scatter_indices, updates, dimension_numbers=dimension_numbers,
                     indices_are_sorted=bool(indices_are_sorted),
                     unique_indices=bool(unique_indices),
                     mode=GatherScatterMode.from_any(mode))


def scatter(operand: Any, scatter_indices: Any, updates: Any,
            dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> Any:
    """``operand`` with the update windows written at the indices (``jax.lax.scatter``);
    for duplicate indices the last update wins. Mode None drops windows that do not fit."""
    return _scatter_api(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)


def scatter_add(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> Any:
    """Adds the update windows at the indices; duplicates accumulate (``jax.lax.scatter_add``)."""
    return _scatter_api(scatter_add_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)


def scatter_mul(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> Any:
    """Multiplies by the update windows at the indices (``jax.lax.scatter_mul``)."""
    return _scatter_api(scatter_mul_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)


def scatter_min(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> Any:
    """The minimum with the update windows at the indices (``jax.lax.scatter_min``)."""
    return _scatter_api(scatter_min_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)


def scatter_max(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> Any:
    """The maximum with the update windows at the indices (``jax.lax.scatter_max``)."""
    return _scatter_api(scatter_max_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)
