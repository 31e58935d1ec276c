"""Cumulative reductions and differences: cumsum, cumprod, nancumsum, nancumprod,
cumulative_sum, cumulative_prod, diff, ediff1d and trapezoid.

Mirrors ``jax._src.numpy.reductions``' cumulative functions: a flattened operand when
``axis`` is None; booleans accumulate in the default integer, other dtypes in their own
(int8 wraps, as in JAX), except that ``cumulative_sum`` widens narrow integers to the
default one (numpy's accumulation); ``dtype=bool`` accumulates ``a != 0`` as integers.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import cumulative as lax_cumulative
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.creation import asarray
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.reductions import sum as jnp_sum
from tinyxla._src.numpy.shape import moveaxis

ArrayLike = Any


def _accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """JAX's ``_promote_integer_dtype``: bool and narrow integers widen to the default
    (unsigned to the default unsigned) integer."""
    int_ = dtypes.default_int_dtype()
    uint_ = np.dtype(np.uint64 if int_ == np.int64 else np.uint32)
    if dtype == np.bool_:
        return int_
    if dtypes.issubdtype(dtype, np.signedinteger) and dtype.itemsize < int_.itemsize:
        return int_
    if dtypes.issubdtype(dtype, np.unsignedinteger) and dtype.itemsize < uint_.itemsize:
        return uint_
    return dtype


def _cumulative(name: str, prim_fn: Any, a: ArrayLike, axis: int | None, dtype: Any,
                fill_nan: Any = None, promote_integers: bool = False) -> Any:
    arr = ensure_arraylike(name, a)
    if axis is None or arr.ndim == 0:
        arr = lax.reshape(arr, (int(np.prod(arr.shape)),))
        axis = 0
    axis = canonicalize_axis(axis, arr.ndim)
    if fill_nan is not None and dtypes.issubdtype(arr.dtype, np.inexact):
        arr = lax.select(lax.ne(arr, arr), lax.full_like(arr, fill_nan), arr)
    if dtype is None:
        result = np.dtype(arr.dtype)
        if promote_integers or result == np.bool_:
            result = _accumulation_dtype(result)
        computation = result
    elif np.dtype(dtype) == np.bool_:
        # lax accumulates numbers only, and [-1, 1] must not cancel: count the nonzeros
        result = np.dtype(np.bool_)
        if arr.dtype != np.bool_:
            arr = lax.ne(arr, lax.full_like(arr, 0))
        computation = _accumulation_dtype(result)
    else:
        result = computation = dtypes.canonicalize_dtype(np.dtype(dtype))
    out = prim_fn(lax.convert_element_type(arr, computation), axis)
    return lax.convert_element_type(out, result)


def cumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Mirrors ``jax.numpy.cumsum``."""
    return _cumulative("cumsum", lax_cumulative.cumsum, a, axis, dtype)


def cumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Mirrors ``jax.numpy.cumprod``."""
    return _cumulative("cumprod", lax_cumulative.cumprod, a, axis, dtype)


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None,
              out: None = None) -> Any:
    """Mirrors ``jax.numpy.nancumsum``: NaNs count as 0."""
    return _cumulative("nancumsum", lax_cumulative.cumsum, a, axis, dtype, fill_nan=0)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None,
               out: None = None) -> Any:
    """Mirrors ``jax.numpy.nancumprod``: NaNs count as 1."""
    return _cumulative("nancumprod", lax_cumulative.cumprod, a, axis, dtype, fill_nan=1)


def _cumulative_api(name: str, prim_fn: Any, x: ArrayLike, axis: int | None, dtype: Any,
                    include_initial: bool, initial: Any, promote_integers: bool) -> Any:
    arr = ensure_arraylike(name, x)
    if arr.ndim == 0:
        raise ValueError("The input must be non-scalar to take a cumulative sum, however a "
                         "scalar value or scalar array was given.")
    if axis is None:
        if arr.ndim > 1:
            raise ValueError(f"The input array has rank {arr.ndim}, however axis was not set "
                             "to an explicit value. The axis argument is only optional for "
                             "one-dimensional arrays.")
        axis = 0
    axis = canonicalize_axis(axis, arr.ndim)
    out = _cumulative(name, prim_fn, arr, axis, dtype, promote_integers=promote_integers)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        out = lax.concatenate([lax.full(tuple(shape), initial, out.dtype), out], axis)
    return out


def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """Mirrors ``jax.numpy.cumulative_sum`` (the array API's)."""
    return _cumulative_api("cumulative_sum", lax_cumulative.cumsum, x, axis, dtype,
                           include_initial, 0, promote_integers=True)


def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Mirrors ``jax.numpy.cumulative_prod`` (the array API's)."""
    return _cumulative_api("cumulative_prod", lax_cumulative.cumprod, x, axis, dtype,
                           include_initial, 1, promote_integers=False)


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.diff``: the n-th forward difference along ``axis`` (booleans
    differ by xor, as numpy's not_equal)."""
    arr = ensure_arraylike("diff", a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    if n == 0:
        return arr
    axis = canonicalize_axis(axis, arr.ndim)
    combined = [] if prepend is None else [_edge(prepend, arr, axis)]
    combined.append(arr)
    if append is not None:
        combined.append(_edge(append, arr, axis))
    if len(combined) > 1:
        combined = promotion.promote_dtypes(*combined)
        arr = lax.concatenate(list(combined), axis)
    for _ in range(n):
        m = arr.shape[axis]
        lo_start, hi_start = [0] * arr.ndim, [0] * arr.ndim
        hi_start[axis] = min(1, m)  # an empty axis stays empty, as arr[1:] - arr[:-1]
        lo_limit = list(arr.shape)
        lo_limit[axis] = max(m - 1, 0)
        hi_limit = list(arr.shape)
        upper = lax.slice(arr, tuple(hi_start), tuple(hi_limit))
        lower = lax.slice(arr, tuple(lo_start), tuple(lo_limit))
        arr = lax.ne(upper, lower) if arr.dtype == np.bool_ else lax.sub(upper, lower)
    return arr


def _edge(value: ArrayLike, arr: Any, axis: int) -> Any:
    """prepend/append: a scalar becomes a size-1 slab along ``axis``."""
    v = ensure_arraylike("diff", value)
    if v.ndim == 0:
        shape = list(arr.shape)
        shape[axis] = 1
        v = lax.broadcast_in_dim(v, tuple(shape), ())
    return v


def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
            to_begin: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.ediff1d``: differences of the flattened array, with optional
    values before and after."""
    arr = ensure_arraylike("ediff1d", ary)
    flat = lax.reshape(arr, (int(np.prod(arr.shape)),))
    result = diff(flat) if flat.shape[0] else flat
    parts = []
    if to_begin is not None:
        parts.append(_ravel_as(to_begin, result.dtype))
    parts.append(result)
    if to_end is not None:
        parts.append(_ravel_as(to_end, result.dtype))
    return lax.concatenate(parts, 0) if len(parts) > 1 else result


def _ravel_as(value: ArrayLike, dtype: np.dtype) -> Any:
    v = asarray(value, dtype=dtype)
    return lax.reshape(v, (int(np.prod(v.shape)),))


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0,
              axis: int = -1) -> Any:
    """Mirrors ``jax.numpy.trapezoid``: the trapezoidal rule along ``axis``, with sample
    points ``x`` (1-d, or shaped like ``y``) or a constant spacing ``dx``."""
    if x is None:
        y_arr, = promotion.promote_dtypes_inexact(ensure_arraylike("trapezoid", y))
        spacing = asarray(dx)
    else:
        y_arr, x_arr = promotion.promote_dtypes_inexact(*ensure_arraylike("trapezoid", y, x))
        spacing = diff(x_arr) if x_arr.ndim == 1 else moveaxis(diff(x_arr, axis=axis), axis, -1)
    y_arr = moveaxis(y_arr, axis, -1)
    pairs = lax.add(y_arr[..., 1:], y_arr[..., :-1])
    return lax.mul(jnp_sum(spacing * pairs, axis=-1), lax.full((), 0.5, pairs.dtype))
