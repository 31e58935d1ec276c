"""The sort primitive: ``sort`` (several operands sorted together by their first
``num_keys``), and ``sort_key_val`` and ``top_k`` built on it.

Mirrors ``jax._src.lax.lax.sort``. Floats follow JAX's total order for sorting: NaNs
last (all equal), -0.0 equal to 0.0. The CPU kernel always sorts stably, which is also a
valid answer for ``is_stable=False``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src.array import Array
from tinyxla._src.core import Primitive, ShapedArray, Tracer
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax.lax import (
    _colocated, _operand, _reject, _result, bitcast_convert_type, bitwise_not, bitwise_xor,
    broadcast_in_dim, broadcasted_iota, full, lt, select, slice)
from tinyxla._src.lax.slicing import GatherDimensionNumbers, gather


def _canonicalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _sort_abstract_eval(*operands: Any, dimension: int, is_stable: bool,
                        num_keys: int) -> list[ShapedArray]:
    shape = operands[0].shape
    if any(o.shape != shape for o in operands[1:]):
        shapes = " ".join(str(o.shape) for o in operands)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


def _sort_impl(*operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list[Array]:
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    xs = [a if type(a) is Array else _operand(sort_p, k, a) for k, a in enumerate(operands)]
    moved = _colocated(sort_p, xs)
    if moved is not None:
        xs = moved
    try:
        handles = _core.sort([x._h for x in xs], dimension, num_keys)
    except (TypeError, ValueError, IndexError) as e:
        _reject(sort_p, xs, params, e)
        raise
    return [_result(h, x.weak_type, x.dtype, xs) for h, x in zip(handles, xs)]


sort_p = Primitive('sort', multiple_results=True)
sort_p.def_abstract_eval(_sort_abstract_eval)
sort_p.def_impl(_sort_impl)
register_lowering(sort_p, lambda ctx, *xs, dimension, is_stable, num_keys:
                  ctx.builder.sort(list(xs), dimension, num_keys))


def _take_along(x: Any, perm: Any, dimension: int) -> Any:
    """``x`` permuted along ``dimension`` by ``perm`` (same shape): a gather whose other
    dims are batching dims, so it is linear in ``x`` with a scatter-add transpose."""
    if 0 in x.shape:  # nothing to permute (and no size-1 slice fits)
        return x
    others = tuple(d for d in range(x.ndim) if d != dimension)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(dimension,),
                                   start_index_map=(dimension,), operand_batching_dims=others,
                                   start_indices_batching_dims=others)
    indices = broadcast_in_dim(perm, (*perm.shape, 1), tuple(range(perm.ndim)))
    return gather(x, indices, dnums, (1,) * x.ndim)


def _sort_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, dimension: int,
              is_stable: bool, num_keys: int) -> tuple[list[Any], list[Any]]:
    """JAX's rule: sort an iota along, then permute each tangent by it."""
    shape = primals[0].shape
    index_dtype = np.int32 if shape[dimension] < np.iinfo(np.int32).max else np.int64
    iota = broadcasted_iota(index_dtype, shape, dimension)
    *out, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                             num_keys=num_keys)
    tangents_out = [t if type(t) is ad.Zero else _take_along(t, perm, dimension)
                    for t in tangents]
    return out, tangents_out


ad.primitive_jvps[sort_p] = _sort_jvp


def _sort_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *, dimension: int,
                     is_stable: bool, num_keys: int) -> tuple[list[Any], list[int]]:
    """Unbatched operands are broadcast, the batch axis goes first and the sorted dimension
    shifts past it."""
    size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
    args = []
    for v, d in zip(vals, dims):
        if d is None:
            args.append(broadcast_in_dim(v, (size, *v.shape), tuple(range(1, v.ndim + 1))))
        else:
            args.append(batching.moveaxis(v, d, 0))
    out = sort_p.bind(*args, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return out, [0] * len(out)


batching.primitive_batchers[sort_p] = _sort_batch_rule


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """``jax.lax.sort``: one array, or a sequence of arrays sorted together by the first
    ``num_keys`` of them (lexicographically)."""
    if isinstance(operand, (list, tuple)):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"{num_keys=} must be between 1 and {len(operand)=}")
        ndim = len(np.shape(operand[0]))
        dimension = _canonicalize_axis(dimension, ndim)
        return tuple(sort_p.bind(*operand, dimension=dimension, is_stable=is_stable,
                                 num_keys=num_keys))
    if num_keys != 1:
        raise ValueError(f"{num_keys=} must equal 1 for a single operand.")
    dimension = _canonicalize_axis(dimension, len(np.shape(operand)))
    return sort_p.bind(operand, dimension=dimension, is_stable=is_stable, num_keys=1)[0]


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """``jax.lax.sort_key_val``: ``values`` reordered as ``keys`` sort."""
    dimension = _canonicalize_axis(dimension, len(np.shape(keys)))
    k, v = sort_p.bind(keys, values, dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """``jax.lax.top_k``: the ``k`` largest entries along the last axis, descending, and
    their int32 indices (earlier index first among equals). Differs from JAX: a sort plus a
    slice rather than a dedicated primitive."""
    shape = np.shape(operand)
    if len(shape) == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got ()")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > shape[-1]:
        raise ValueError(f"k argument to top_k must be no larger than size along axis; got "
                         f"k={k} with shape={list(shape)} and axis={len(shape) - 1}")
    if not isinstance(operand, (Array, Tracer)):
        operand = _operand(sort_p, 0, operand)  # canonical dtype, for the bitcast keys
    dim = len(shape) - 1
    iota = broadcasted_iota(np.int32, shape, dim)
    keys = _descending_keys(operand)
    *_, values, indices = sort_p.bind(*keys, operand, iota, dimension=dim, is_stable=True,
                                      num_keys=len(keys))
    start, limit = (0,) * len(shape), (*shape[:-1], k)
    return slice(values, start, limit), slice(indices, start, limit)


def _descending_keys(x: Any) -> list[Any]:
    """Keys whose ascending stable order is ``x``'s descending order in XLA TopK's total
    order (floats by their bits: -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN): the
    bitwise complement of an order-preserving integer (no overflow)."""
    dtype = np.dtype(x.dtype)
    if dtype == np.bool_ or np.issubdtype(dtype, np.integer):
        return [bitwise_not(x)]
    if np.issubdtype(dtype, np.floating) or dtype.name == "bfloat16":
        int_dtype = {2: np.int16, 4: np.int32, 8: np.int64}[dtype.itemsize]
        bits = bitcast_convert_type(x, int_dtype)
        # Negative floats order backwards as integers: flip all but the sign bit.
        flipped = bitwise_xor(bits, full(bits.shape, np.iinfo(int_dtype).max, int_dtype))
        key = select(lt(bits, full(bits.shape, 0, int_dtype)), flipped, bits)
        return [bitwise_not(key)]
    raise TypeError(f"top_k is not implemented for {dtype.name} operands")
