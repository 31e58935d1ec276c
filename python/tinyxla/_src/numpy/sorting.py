"""Sorting and order statistics: sort, argsort, lexsort, partition, argpartition,
searchsorted, digitize, median, quantile and percentile (and their nan forms).

Mirrors ``jax._src.numpy.sorting`` / ``jax.numpy.searchsorted`` / ``jax.numpy.quantile``,
all built on ``lax.sort`` (NaNs last, -0.0 equal to 0.0). ``searchsorted`` is an unrolled
binary search of lax ops (JAX's default 'scan' method computes the same). ``quantile``
has every method; ``weights`` go with 'inverted_cdf' only, as in JAX.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import cumulative as lax_cumulative
from tinyxla._src.lax import lax
from tinyxla._src.lax import slicing
from tinyxla._src.lax import sorting as lax_sorting
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.indexing import take, take_along_axis
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike

ArrayLike = Any


def _flat_or(arr: Any, axis: int | None) -> tuple[Any, int]:
    if axis is None:
        return lax.reshape(arr, (int(np.prod(arr.shape)),)), 0
    return arr, canonicalize_axis(axis, arr.ndim)


def sort(a: ArrayLike, axis: int | None = -1, *, kind: None = None, order: None = None,
         stable: bool = True, descending: bool = False) -> Any:
    """Mirrors ``jax.numpy.sort``; ``descending`` reverses the ascending sort (NaNs first)."""
    if order is not None:
        raise TypeError("'order' argument to sort is not supported.")
    arr, dimension = _flat_or(ensure_arraylike("sort", a), axis)
    result = lax_sorting.sort(arr, dimension=dimension, is_stable=stable)
    return lax.rev(result, (dimension,)) if descending else result


def argsort(a: ArrayLike, axis: int | None = -1, *, kind: None = None, order: None = None,
            stable: bool = True, descending: bool = False, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.argsort``: a stable descending order keeps equal elements in
    their original order (the operand is reversed before sorting); ``dtype`` is the
    indices' dtype (any, as in JAX)."""
    if order is not None:
        raise ValueError("'order' argument to argsort is not supported.")
    arr, dimension = _flat_or(ensure_arraylike("argsort", a), axis)
    if dtype is not None:
        index_dtype = lax._canonical_dtype(dtypes.check_user_dtype_supported(dtype, "argsort"))
    else:
        index_dtype = (np.int64 if arr.shape[dimension] >= (1 << 31)
                       else dtypes.default_int_dtype())
    iota = lax.broadcasted_iota(index_dtype, arr.shape, dimension)
    if descending and stable:
        arr = lax.rev(arr, (dimension,))
        iota = lax.rev(iota, (dimension,))
    _, indices = lax_sorting.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
    return lax.rev(indices, (dimension,)) if descending else indices


def sort_complex(a: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.sort_complex``: sorted along the last axis, as complex."""
    a = ensure_arraylike("sort_complex", a)
    a = lax_sorting.sort(a, dimension=a.ndim - 1) if a.ndim else a
    return lax.convert_element_type(a, dtypes.to_complex_dtype(a.dtype))


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


def _negate(x: Any) -> Any:
    """An order-reversing map for top_k: -x, or ~x (JAX's -(x + 1)) for unsigned x, where
    -0 would rank 0 with the largest values."""
    if dtypes.issubdtype(x.dtype, np.unsignedinteger):
        return lax.bitwise_not(x)
    return lax.neg(x)


_unnegate = _negate  # both maps are involutions


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """Mirrors ``jax.numpy.partition``: the kth smallest at position kth, smaller ones
    before it (ascending) and larger ones after (descending), as JAX's top_k construction
    orders them."""
    arr = ensure_arraylike("partition", a)
    axis = canonicalize_axis(axis, arr.ndim)
    kth = canonicalize_axis(kth, arr.shape[axis])
    arr = _swap(arr, axis, arr.ndim - 1)
    bottom = _unnegate(lax_sorting.top_k(_negate(arr), kth + 1)[0])
    top = lax_sorting.top_k(arr, arr.shape[-1] - kth - 1)[0]
    out = lax.concatenate([bottom, top], arr.ndim - 1)
    return _swap(out, axis, arr.ndim - 1)


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """Mirrors ``jax.numpy.argpartition``: the indices of the kth+1 smallest (ascending)
    first, then the others in index order, as JAX's top_k construction gives."""
    arr = ensure_arraylike("argpartition", a)
    axis = canonicalize_axis(axis, arr.ndim)
    kth = canonicalize_axis(kth, arr.shape[axis])
    arr = _swap(arr, axis, arr.ndim - 1)
    last = arr.ndim - 1
    bottom_ind = lax_sorting.top_k(_negate(arr), kth + 1)[1]
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
    """x < y in lax.sort's order (NaNs last, equal to each other; complex numbers by real
    part, then imaginary part)."""
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        xr, yr = lax.real(x), lax.real(y)
        same_real = lax.bitwise_or(lax.eq(xr, yr),
                                   lax.bitwise_and(lax.ne(xr, xr), lax.ne(yr, yr)))
        return lax.bitwise_or(_sort_less(xr, yr),
                              lax.bitwise_and(same_real, _sort_less(lax.imag(x), lax.imag(y))))
    if dtypes.issubdtype(x.dtype, np.inexact):
        return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))
    return lax.lt(x, y)


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None,
                 *, method: str = "scan") -> Any:
    """Mirrors ``jax.numpy.searchsorted``: where ``v``'s elements would go in the sorted 1-d
    ``a`` (int32 indices). Every method is the same unrolled binary search here."""
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"invalid argument method={method!r}, expected one of "
                         "['compare_all', 'scan', 'scan_unrolled', 'sort']")
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


def _ge(x: Any, y: Any) -> Any:
    """jnp's x >= y: complex numbers compare by real part, then imaginary part (IEEE)."""
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        xr, yr = lax.real(x), lax.real(y)
        return lax.bitwise_or(lax.gt(xr, yr), lax.bitwise_and(
            lax.eq(xr, yr), lax.ge(lax.imag(x), lax.imag(y))))
    return lax.ge(x, y)


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
    ascending = _ge(bins_arr[-1], bins_arr[0])
    return lax.select(lax.broadcast_in_dim(ascending, x.shape, ()), increasing, decreasing)


def quantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
             out: None = None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, weights: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.quantile``: q (scalar or 1-d) leads the result's shape; any
    NaN in a slice makes its result NaN; the result has a's (inexact) dtype."""
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, False,
                     weights)


def nanquantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
                out: None = None, overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nanquantile``: NaNs are ignored; an all-NaN slice gives NaN."""
    return _quantile("nanquantile", a, q, axis, out, overwrite_input, method, keepdims, True,
                     weights)


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile(name: str, a: ArrayLike, q: ArrayLike, axis: Any, out: None,
              overwrite_input: bool, method: str, keepdims: bool, ignore_nan: bool,
              weights: Any) -> Any:
    """JAX's ``_quantile``: a and q are made inexact separately (with ``weights``, a and
    the weights together), the positions computed in q's dtype, the result converted
    to a's dtype."""
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                         "out != None")
    if method not in _QUANTILE_METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    a, q = ensure_arraylike(name, a, q)
    if weights is not None:
        weights = ensure_arraylike(name, weights)
        if dtypes.issubdtype(weights.dtype, np.complexfloating):
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                      "'inverted_cdf' supports weights.")
        a, weights = promotion.promote_dtypes_inexact(a, weights)
        if weights.shape != a.shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            axes_w = tuple(canonicalize_axis(ax, a.ndim)
                           for ax in (axis if isinstance(axis, tuple) else (axis,)))
            want = tuple(a.shape[ax] for ax in axes_w)
            if weights.shape != want:
                raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                                 f"{want}")
            weights = lax.broadcast_in_dim(weights, a.shape, axes_w)
    else:
        a, = promotion.promote_dtypes_inexact(a)
    q, = promotion.promote_dtypes_inexact(q)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    nd = a.ndim
    if axis is None:
        reduced: tuple[int, ...] = tuple(range(nd))
        # JAX's quirk: a 0-d input keeps one axis under keepdims.
        keep_shape = (1,) * nd if nd else (1,)
    else:
        axes = axis if isinstance(axis, tuple) else (operator.index(axis),)
        reduced = tuple(canonicalize_axis(ax, nd) for ax in axes)
        if len(set(reduced)) != len(reduced):
            raise ValueError("repeated axis")
        keep_shape = tuple(1 if d in reduced else s for d, s in enumerate(a.shape))
    kept = tuple(d for d in range(nd) if d not in reduced)
    batch = tuple(a.shape[d] for d in kept)
    n = int(np.prod([a.shape[d] for d in reduced]))
    # The kept axes first, in order; the reduced ones merged last.
    a = lax.reshape(lax.transpose(a, (*kept, *reduced)), (*batch, n))
    last = a.ndim - 1
    if not ignore_nan and n:
        has_nan = lax.reduce_or(lax.ne(a, a), (last,))
        a = lax.select(lax.broadcast_in_dim(has_nan, a.shape, tuple(range(last))),
                       lax.full_like(a, np.nan), a)
    if method == "inverted_cdf":
        if weights is None:
            w = lax.full_like(a, 1)
        else:
            w = lax.reshape(lax.transpose(weights, (*kept, *reduced)), (*batch, n))
        s, w = lax_sorting.sort_key_val(a, w, dimension=last)
        result = _inverted_cdf(s, w, q, ignore_nan)
    else:
        s = lax_sorting.sort(a, dimension=last)   # NaNs last
        result = _interpolated(s, q, method, ignore_nan)
    bdims = tuple(range(len(batch)))
    # q's dims first, then the kept dims.
    result = lax.reshape(result, (*batch, *q.shape))
    qdims = tuple(range(len(batch), len(batch) + q.ndim))
    result = lax.transpose(result, (*qdims, *bdims))
    if keepdims:
        result = lax.reshape(result, (*q.shape, *keep_shape))
    return lax.convert_element_type(result, a.dtype)


def _inverted_cdf(s: Any, w: Any, q: Any, ignore_nan: bool) -> Any:
    """The first sorted value whose cumulative weight reaches q * the total, per q:
    (batch, nq). Negative or NaN weights make the result NaN, as NaN data does (with
    ``ignore_nan``, only an all-NaN slice)."""
    last = s.ndim - 1
    batch, n = s.shape[:-1], s.shape[-1]
    nq = int(np.prod(q.shape))
    bdims = tuple(range(len(batch)))
    zero = lax.full_like(w, 0)
    bad_weight = lax.bitwise_or(lax.lt(w, zero), lax.ne(w, w))
    nan_data = lax.ne(s, s)
    clean = lax.select(lax.bitwise_or(bad_weight, nan_data), zero, w)
    cum = lax_cumulative.cumsum(clean, axis=last)
    total = (lax.reshape(lax.slice(cum, (0,) * len(batch) + (n - 1,), cum.shape), batch)
             if n else lax.full(batch, 0, w.dtype))
    bq = (*batch, nq)
    target = lax.mul(lax.broadcast_in_dim(lax.convert_element_type(lax.reshape(q, (nq,)),
                                                                   w.dtype), bq, (len(batch),)),
                     lax.broadcast_in_dim(total, bq, bdims))
    below = lax.lt(lax.broadcast_in_dim(cum, (*batch, nq, n), (*bdims, len(batch) + 1)),
                   lax.broadcast_in_dim(target, (*batch, nq, n), (*bdims, len(batch))))
    idx = lax.reduce_sum(lax.convert_element_type(below, np.int32), (len(batch) + 1,))
    if ignore_nan:
        valid = lax.reduce_sum(lax.convert_element_type(lax.bitwise_not(nan_data), np.int32),
                               (last,))
    else:
        valid = lax.full(batch, n, np.int32)
    limit = lax.broadcast_in_dim(lax.sub(valid, lax.full_like(valid, 1)), bq, bdims)
    idx = lax.max(lax.full_like(idx, 0), lax.min(idx, limit))
    result = take_along_axis(s, idx, axis=-1) if n else lax.full(bq, np.nan, s.dtype)
    any_bad = lax.reduce_or(bad_weight, (last,))
    if ignore_nan:
        force = lax.bitwise_or(any_bad, lax.eq(valid, lax.full_like(valid, 0)))
    else:
        force = lax.bitwise_or(any_bad, lax.reduce_or(nan_data, (last,)))
    return lax.select(lax.broadcast_in_dim(force, bq, bdims), lax.full_like(result, np.nan),
                      result)


def _interpolated(s: Any, q: Any, method: str, ignore_nan: bool) -> Any:
    """The linear/lower/higher/midpoint/nearest quantiles of the sorted last axis, per q:
    (batch, nq)."""
    last = s.ndim - 1
    batch, n = s.shape[:-1], s.shape[-1]
    nq = int(np.prod(q.shape))
    bq = (*batch, nq)
    bdims = tuple(range(len(batch)))
    if ignore_nan:
        count = lax.reduce_sum(lax.convert_element_type(lax.eq(s, s), q.dtype), (last,))
    else:
        count = lax.full(batch, n, q.dtype)
    top = lax.broadcast_in_dim(lax.sub(count, lax.full(batch, 1, q.dtype)), bq, bdims)
    pos = lax.mul(lax.broadcast_in_dim(lax.reshape(q, (nq,)), bq, (len(batch),)), top)
    low, high = lax.floor(pos), lax.ceil(pos)
    high_weight = lax.sub(pos, low)
    low_weight = lax.sub(lax.full(bq, 1, q.dtype), high_weight)
    zero = lax.full(bq, 0, q.dtype)
    low_i = lax.convert_element_type(lax.max(zero, lax.min(low, top)), np.int32)
    high_i = lax.convert_element_type(lax.max(zero, lax.min(high, top)), np.int32)
    if n:
        low_value = take_along_axis(s, low_i, axis=-1)
        high_value = take_along_axis(s, high_i, axis=-1)
    else:
        low_value = high_value = lax.full(bq, np.nan, s.dtype)
    if method == "linear":
        result = lax.add(lax.mul(lax.convert_element_type(low_value, q.dtype), low_weight),
                         lax.mul(lax.convert_element_type(high_value, q.dtype), high_weight))
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = lax.select(lax.le(high_weight, lax.full_like(high_weight, 0.5)),
                            low_value, high_value)
    else:  # midpoint
        result = lax.mul(lax.add(low_value, high_value), lax.full_like(low_value, 0.5))
    return result


def _percent_as_fraction(name: str, a: ArrayLike, q: ArrayLike) -> tuple[Any, Any]:
    """``a`` and the percentiles ``q`` as quantiles (``q / 100``, inexact)."""
    a, q = ensure_arraylike(name, a, q)
    q, = promotion.promote_dtypes_inexact(q)
    return a, lax.div(q, lax.full(q.shape, 100, q.dtype))


def percentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
               out: None = None, overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False, *, weights: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.percentile``: quantile of q / 100."""
    a, q = _percent_as_fraction("percentile", a, q)
    return quantile(a, q, axis=axis, out=out, overwrite_input=overwrite_input,
                    method=method, keepdims=keepdims, weights=weights)


def median(a: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
           overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.median``: the 0.5 quantile."""
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
                  out: None = None, overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nanpercentile``: nanquantile of q / 100."""
    a, q = _percent_as_fraction("nanpercentile", a, q)
    return nanquantile(a, q, axis=axis, out=out, overwrite_input=overwrite_input,
                       method=method, keepdims=keepdims, weights=weights)


def nanmedian(a: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
              overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.nanmedian``: the 0.5 quantile of the non-NaN elements."""
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims)
