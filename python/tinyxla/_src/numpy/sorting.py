"""Sorting and order statistics: sort, argsort, lexsort, partition, argpartition,
searchsorted, digitize, unique, median, quantile and percentile (and their nan forms).

Mirrors ``jax._src.numpy.sorting`` / ``jax.numpy.searchsorted`` / ``jax.numpy.quantile``,
all built on ``lax.sort`` (NaNs last, -0.0 equal to 0.0). ``searchsorted`` is an unrolled
binary search of lax ops (JAX's default 'scan' method computes the same). ``unique``
needs concrete input unless ``size`` is given, as in JAX. ``quantile`` supports only
method='linear'.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.lax import cumulative as lax_cumulative
from tinyxla._src.lax import lax
from tinyxla._src.lax import slicing
from tinyxla._src.lax import sorting as lax_sorting
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.indexing import take, take_along_axis
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.selection import nonzero

ArrayLike = Any


def _flat_or(arr: Any, axis: int | None) -> tuple[Any, int]:
    if axis is None:
        return lax.reshape(arr, (int(np.prod(arr.shape)),)), 0
    return arr, canonicalize_axis(axis, arr.ndim)


def sort(a: ArrayLike, axis: int | None = -1, *, kind: None = None, order: None = None,
         stable: bool = True, descending: bool = False) -> Any:
    """Mirrors ``jax.numpy.sort``; ``descending`` reverses the ascending sort (NaNs first)."""
    if order is not None:
        raise ValueError("'order' argument to sort is not supported.")
    arr, dimension = _flat_or(ensure_arraylike("sort", a), axis)
    result = lax_sorting.sort(arr, dimension=dimension, is_stable=stable)
    return lax.rev(result, (dimension,)) if descending else result


def argsort(a: ArrayLike, axis: int | None = -1, *, kind: None = None, order: None = None,
            stable: bool = True, descending: bool = False) -> Any:
    """Mirrors ``jax.numpy.argsort``: a stable descending order keeps equal elements in
    their original order (the operand is reversed before sorting)."""
    if order is not None:
        raise ValueError("'order' argument to argsort is not supported.")
    arr, dimension = _flat_or(ensure_arraylike("argsort", a), axis)
    index_dtype = np.int64 if arr.shape[dimension] >= (1 << 31) else dtypes.default_int_dtype()
    iota = lax.broadcasted_iota(index_dtype, arr.shape, dimension)
    if descending and stable:
        arr = lax.rev(arr, (dimension,))
        iota = lax.rev(iota, (dimension,))
    _, indices = lax_sorting.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
    return lax.rev(indices, (dimension,)) if descending else indices


def lexsort(keys: Sequence[ArrayLike], axis: int = -1) -> Any:
    """Mirrors ``jax.numpy.lexsort``: the last key is the primary one."""
    key_arrays = tuple(ensure_arraylike("lexsort", *keys)) if len(keys) > 1 else \
        tuple(ensure_arraylike("lexsort", k) for k in keys)
    if len(key_arrays) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({np.shape(k) for k in key_arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    if np.ndim(key_arrays[0]) == 0:
        return lax.full((), 0, dtypes.default_int_dtype())
    shape = key_arrays[0].shape
    axis = canonicalize_axis(axis, len(shape))
    index_dtype = np.int64 if shape[axis] >= (1 << 31) else dtypes.default_int_dtype()
    iota = lax.broadcasted_iota(index_dtype, shape, axis)
    return lax_sorting.sort((*key_arrays[::-1], iota), dimension=axis,
                            num_keys=len(key_arrays))[-1]


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """Mirrors ``jax.numpy.partition``: the kth smallest at position kth, smaller ones
    before it (ascending) and larger ones after (descending), as JAX's top_k construction
    orders them."""
    arr = ensure_arraylike("partition", a)
    if dtypes.issubdtype(arr.dtype, np.unsignedinteger):
        raise NotImplementedError("jnp.partition for unsigned dtypes")
    axis = canonicalize_axis(axis, arr.ndim)
    kth = canonicalize_axis(kth, arr.shape[axis])
    arr = _swap(arr, axis, arr.ndim - 1)
    bottom = lax.neg(lax_sorting.top_k(lax.neg(arr), kth + 1)[0])
    top = lax_sorting.top_k(arr, arr.shape[-1] - kth - 1)[0]
    out = lax.concatenate([bottom, top], arr.ndim - 1)
    return _swap(out, axis, arr.ndim - 1)


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """Mirrors ``jax.numpy.argpartition``: the indices of the kth+1 smallest (ascending)
    first, then the others in index order, as JAX's top_k construction gives."""
    arr = ensure_arraylike("argpartition", a)
    if dtypes.issubdtype(arr.dtype, np.unsignedinteger):
        raise NotImplementedError("jnp.argpartition for unsigned dtypes")
    axis = canonicalize_axis(axis, arr.ndim)
    kth = canonicalize_axis(kth, arr.shape[axis])
    arr = _swap(arr, axis, arr.ndim - 1)
    last = arr.ndim - 1
    bottom_ind = lax_sorting.top_k(lax.neg(arr), kth + 1)[1]
    # The others: top_k of a proxy that is 0 at the bottom indices and 1 elsewhere.
    others = tuple(range(last))
    dnums = slicing.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(last,), scatter_dims_to_operand_dims=(last,),
        operand_batching_dims=others, scatter_indices_batching_dims=others)
    proxy = slicing.scatter(lax.full(arr.shape, 1, np.int32),
                            lax.broadcast_in_dim(bottom_ind, (*bottom_ind.shape, 1),
                                                 tuple(range(bottom_ind.ndim))),
                            lax.full(bottom_ind.shape, 0, np.int32), dnums)
    top_ind = lax_sorting.top_k(proxy, arr.shape[-1] - kth - 1)[1]
    out = lax.concatenate([bottom_ind, top_ind], last)
    return _swap(out, axis, last)


def _swap(x: Any, a: int, b: int) -> Any:
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return lax.transpose(x, tuple(perm))


def _sort_less(x: Any, y: Any) -> Any:
    """x < y in lax.sort's order (NaNs last, equal to each other)."""
    if dtypes.issubdtype(x.dtype, np.inexact):
        return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))
    return lax.lt(x, y)


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None,
                 *, method: str = "scan") -> Any:
    """Mirrors ``jax.numpy.searchsorted``: where ``v``'s elements would go in the sorted 1-d
    ``a`` (int32 indices). Every method is the same unrolled binary search here."""
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. "
                         "Expected one of ['left', 'right'].")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"{method!r} is an invalid value for keyword 'method'. Expected one "
                         "of ['sort', 'scan', 'scan_unrolled', 'compare_all'].")
    a, v = ensure_arraylike("searchsorted", a, v)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = take(a, sorter)
    a, v = promotion.promote_dtypes(a, v)
    n = a.shape[0]
    index_dtype = np.int32 if n < np.iinfo(np.int32).max else np.int64
    lo = lax.full(v.shape, 0, index_dtype)
    if n == 0:
        return lo
    hi = lax.full(v.shape, n, index_dtype)
    one = lax.full(v.shape, 1, index_dtype)
    two = lax.full(v.shape, 2, index_dtype)
    last = lax.full(v.shape, n - 1, index_dtype)
    for _ in range(int(n).bit_length() + 1):
        mid = lax.div(lax.add(lo, hi), two)
        at = take(a, lax.min(mid, last))
        # left: the first a[i] not < v; right: the first a[i] with v < a[i].
        go_right = (_sort_less(at, v) if side == "left"
                    else lax.bitwise_not(_sort_less(v, at)))
        go_right = lax.bitwise_and(go_right, lax.lt(lo, hi))
        lo = lax.select(go_right, lax.add(mid, one), lo)
        hi = lax.select(go_right, hi, lax.max(mid, lo))
    return lo


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False, *,
             method: str | None = None) -> Any:
    """Mirrors ``jax.numpy.digitize``: the bin of each element, for increasing or
    decreasing ``bins``."""
    x, bins_arr = ensure_arraylike("digitize", x, bins)
    if bins_arr.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got {bins=}")
    n = bins_arr.shape[0]
    if n == 0:
        return lax.full(x.shape, 0, np.int32)
    side = "right" if not right else "left"
    kw = {} if method is None else {"method": method}
    increasing = searchsorted(bins_arr, x, side=side, **kw)
    decreasing = lax.sub(lax.full(x.shape, n, increasing.dtype),
                         searchsorted(lax.rev(bins_arr, (0,)), x, side=side, **kw))
    ascending = lax.ge(bins_arr[-1], bins_arr[0])
    return lax.select(lax.broadcast_in_dim(ascending, x.shape, ()), increasing, decreasing)


def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.unique`` for axis=None: the sorted distinct elements, optionally
    with first indices, the inverse and counts. Without ``size`` the input must be
    concrete; with it the result is padded with ``fill_value`` (default: the minimum)."""
    if axis is not None:
        raise NotImplementedError("jnp.unique with an axis is not implemented in tinyxla")
    arr = ensure_arraylike("unique", ar)
    if size is None and isinstance(arr, core.Tracer):
        raise errors.ConcretizationTypeError(
            arr, "The error arose in jnp.unique(). When jnp.unique is used inside a "
                 "transformation, size must be specified.")
    flat = lax.reshape(arr, (int(np.prod(arr.shape)),))
    n = flat.shape[0]
    index_dtype = dtypes.default_int_dtype()
    iota = lax.iota(index_dtype, n)
    sorted_vals, perm = lax_sorting.sort_key_val(flat, iota)
    if n == 0:
        mask = lax.full((0,), True, np.bool_)
    else:
        prev, cur = sorted_vals[:-1], sorted_vals[1:]
        differs = lax.ne(prev, cur)
        if equal_nan and dtypes.issubdtype(flat.dtype, np.inexact):
            differs = lax.bitwise_and(differs, lax.bitwise_not(
                lax.bitwise_and(lax.ne(prev, prev), lax.ne(cur, cur))))
        mask = lax.concatenate([lax.full((1,), True, np.bool_), differs], 0)
    if size is None:
        size = int(np.asarray(lax.reduce_sum(lax.convert_element_type(mask, np.int32), (0,))))
    starts, = nonzero(mask, size=size, fill_value=n)
    valid = lax.lt(starts, lax.full((size,), n, starts.dtype))
    clipped = lax.min(starts, lax.full((size,), max(n - 1, 0), starts.dtype))
    values = take(sorted_vals, clipped) if n else lax.full((size,), 0, flat.dtype)
    fill = (lax.reduce_min(flat, (0,)) if fill_value is None and n
            else lax.full((), 0 if fill_value is None else fill_value, flat.dtype))
    values = lax.select(valid, values, lax.broadcast_in_dim(fill, (size,), ()))
    if not (return_index or return_inverse or return_counts):
        return values
    out = [values]
    if return_index:
        out.append(lax.select(valid, take(perm, clipped), lax.full((size,), 0, perm.dtype)))
    if return_inverse:
        group = lax.sub(lax_cumulative.cumsum(lax.convert_element_type(mask, index_dtype), 0),
                        lax.full((n,), 1, index_dtype))
        inverse = lax_sorting.sort_key_val(perm, group)[1]
        out.append(lax.reshape(inverse, arr.shape) if arr.ndim else inverse)
    if return_counts:
        ends = lax.concatenate([starts[1:], lax.full((1,), n, starts.dtype)], 0)
        ends = lax.select(valid, lax.min(ends, lax.full((size,), n, starts.dtype)), starts)
        out.append(lax.sub(ends, starts))
    return tuple(out)


def quantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
             out: None = None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.quantile`` with method='linear': q (scalar or array) leads the
    result's shape; any NaN in a slice makes its result NaN."""
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, False)


def nanquantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
                out: None = None, overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.nanquantile`` (method='linear'): NaNs are ignored; an all-NaN
    slice gives NaN."""
    return _quantile("nanquantile", a, q, axis, out, overwrite_input, method, keepdims, True)


def _quantile(name: str, a: ArrayLike, q: ArrayLike, axis: int | None, out: None,
              overwrite_input: bool, method: str, keepdims: bool, ignore_nan: bool) -> Any:
    if method != "linear":
        raise NotImplementedError(f"jnp.{name} method {method!r} is not implemented")
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                         "out != None")
    a, q = ensure_arraylike(name, a, q)
    a, q = promotion.promote_dtypes_inexact(a, q)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    if axis is None:
        reduced_shape = (1,) * a.ndim
        a = lax.reshape(a, (int(np.prod(a.shape)),))
        axis = 0
    else:
        axis = canonicalize_axis(axis, a.ndim)
        reduced_shape = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
    # The reduced axis goes last, the kept ones keep their order; q is flattened to Q.
    a = lax.transpose(a, (*(d for d in range(a.ndim) if d != axis), axis))
    batch, n = a.shape[:-1], a.shape[-1]
    s = lax_sorting.sort(a, dimension=a.ndim - 1)   # NaNs last
    nq = int(np.prod(q.shape))
    bq = (*batch, nq)
    bdims = tuple(range(len(batch)))
    if ignore_nan:
        count = lax.reduce_sum(lax.convert_element_type(lax.eq(s, s), q.dtype), (len(batch),))
    else:
        count = lax.full(batch, n, q.dtype)
    last = lax.sub(count, lax.full(batch, 1, q.dtype))
    pos = lax.mul(lax.broadcast_in_dim(lax.reshape(q, (nq,)), bq, (len(batch),)),
                  lax.broadcast_in_dim(last, bq, bdims))
    low = lax.floor(pos)
    high_weight = lax.sub(pos, low)
    low_weight = lax.sub(lax.full(bq, 1, q.dtype), high_weight)
    # Indices stay among the slice's numbers (a NaN times a zero weight would be NaN).
    top = lax.broadcast_in_dim(lax.max(lax.convert_element_type(last, np.int32),
                                       lax.full(batch, 0, np.int32)), bq, bdims)
    low_i = lax.clamp(lax.full(bq, 0, np.int32), lax.convert_element_type(low, np.int32), top)
    high_i = lax.min(lax.add(low_i, lax.full(bq, 1, np.int32)), top)
    result = lax.add(lax.mul(take_along_axis(s, low_i, axis=-1), low_weight),
                     lax.mul(take_along_axis(s, high_i, axis=-1), high_weight))
    if ignore_nan:
        undefined = lax.eq(count, lax.full(batch, 0, q.dtype))
    else:
        undefined = lax.ne(s[..., -1], s[..., -1]) if n else lax.full(batch, True, np.bool_)
    result = lax.select(lax.broadcast_in_dim(undefined, bq, bdims),
                        lax.full(bq, np.nan, result.dtype), result)
    # q's dims first, then the kept dims.
    result = lax.reshape(result, (*batch, *q.shape))
    qdims = tuple(range(len(batch), len(batch) + q.ndim))
    result = lax.transpose(result, (*qdims, *bdims))
    if keepdims:
        result = lax.reshape(result, (*q.shape, *reduced_shape))
    return result


def _percent_as_fraction(name: str, a: ArrayLike, q: ArrayLike) -> tuple[Any, Any]:
    """``a`` and the percentiles ``q`` as quantiles (``q / 100``, inexact)."""
    a, q = ensure_arraylike(name, a, q)
    q, = promotion.promote_dtypes_inexact(q)
    return a, lax.div(q, lax.full(q.shape, 100, q.dtype))


def percentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
               out: None = None, overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.percentile``: quantile of q / 100."""
    a, q = _percent_as_fraction("percentile", a, q)
    return quantile(a, q, axis=axis, out=out, overwrite_input=overwrite_input,
                    method=method, keepdims=keepdims)


def median(a: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
           overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.median``: the 0.5 quantile."""
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
                  out: None = None, overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.nanpercentile``: nanquantile of q / 100."""
    a, q = _percent_as_fraction("nanpercentile", a, q)
    return nanquantile(a, q, axis=axis, out=out, overwrite_input=overwrite_input,
                       method=method, keepdims=keepdims)


def nanmedian(a: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
              overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.nanmedian``: the 0.5 quantile of the non-NaN elements."""
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims)
