"""Reductions that ignore NaNs: nanmin, nanmax, nanprod, nanvar, nanstd, nanargmax, nanargmin.

Mirrors the ``nan*`` functions of ``jax._src.numpy.reductions`` and ``lax_numpy``: NaNs
are replaced by the reduction's identity; nanmin/nanmax of an all-NaN slice are NaN
(unless ``initial`` is given), nanargmax/nanargmin of one are -1 (numpy raises), and
nanvar's normalizer counts the non-NaN elements. Integer inputs take the plain reduction.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, reductions
from tinyxla._src.numpy.promotion import ensure_arraylike
from tinyxla._src.numpy.selection import where_arrays

ArrayLike = Any
Axis = None | int | Sequence[int]


def _is_inexact(dt: np.dtype) -> bool:
    return dtypes.issubdtype(dt, np.inexact)


def _isnan(a: Any) -> Any:
    return lax.ne(a, a)


def _nan_reduction(a: ArrayLike, name: str, reduction: Callable[..., Any], init_val: float,
                   nan_if_all_nan: bool, axis: Axis, keepdims: bool, where: Any,
                   **kwargs: Any) -> Any:
    a = ensure_arraylike(name, a)
    where = reductions._check_where(name, where)
    if not _is_inexact(a.dtype):
        return reduction(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
    nan = _isnan(a)
    out = reduction(lax.select_n(nan, a, lax.full_like(a, init_val)), axis=axis, keepdims=keepdims, where=where, **kwargs)
    if not nan_if_all_nan:
        return out
    all_nan = reductions.all(nan, axis=axis, keepdims=keepdims)
    return where_arrays(all_nan, lax.full_like(out, np.nan), out)


def nanmin(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
           initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nanmin``: NaN for an all-NaN slice unless ``initial`` is given."""
    return _nan_reduction(a, "nanmin", reductions.min, np.inf, initial is None, axis,
                          keepdims, where, out=out, initial=initial)


def nanmax(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
           initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nanmax``: NaN for an all-NaN slice unless ``initial`` is given."""
    return _nan_reduction(a, "nanmax", reductions.max, -np.inf, initial is None, axis,
                          keepdims, where, out=out, initial=initial)


def nanprod(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, initial: ArrayLike | None = None,
            where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nanprod``: the product with NaNs counted as one."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "nanprod")
    return _nan_reduction(a, "nanprod", reductions.prod, 1, False, axis, keepdims, where,
                          dtype=dtype, out=out, initial=initial)


def nanvar(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
           ddof: int = 0, keepdims: bool = False, where: ArrayLike | None = None,
           mean: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nanvar``: the variance of the non-NaN elements; NaN where
    their count minus ``ddof`` is not positive."""
    a = ensure_arraylike("nanvar", a)
    where = reductions._check_where("nanvar", where)
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "nanvar")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanvar is not supported.")
    axis = reductions._ensure_optional_axes(axis)
    computation_dtype, dtype = reductions._var_promote_types(a.dtype, dtype)
    a = lax.convert_element_type(a, computation_dtype)
    if mean is None:
        a_mean = reductions.nanmean(a, axis, dtype=computation_dtype, keepdims=True,
                                    where=where)
    else:
        a_mean = lax.convert_element_type(ensure_arraylike("nanvar", mean), computation_dtype)
    nan = _isnan(a)
    diff = lax.sub(a, promotion.broadcast_to_shape(a_mean, a.shape))
    centered = lax.select_n(nan, diff, lax.full_like(diff, 0))  # zero gradient at NaNs
    if dtypes.issubdtype(centered.dtype, np.complexfloating):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.square(centered)
    normalizer = reductions.sum(lax.bitwise_not(nan), axis=axis, keepdims=keepdims,
                                where=where)
    normalizer = lax.sub(normalizer, lax.convert_element_type(ddof, normalizer.dtype))
    empty = lax.le(normalizer, lax.full_like(normalizer, 0))
    result = reductions.sum(centered, axis, keepdims=keepdims, where=where)
    result = lax.select_n(empty, result, lax.full_like(result, np.nan))
    divisor = lax.select_n(empty, normalizer, lax.full_like(normalizer, 1))
    result = lax.div(result, lax.convert_element_type(divisor, result.dtype))
    return lax.convert_element_type(result, dtype)


def nanstd(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
           ddof: int = 0, keepdims: bool = False, where: ArrayLike | None = None,
           mean: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nanstd``: the square root of nanvar."""
    a = ensure_arraylike("nanstd", a)
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "nanstd")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanstd is not supported.")
    return lax.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                           where=where, mean=mean))


def _nanarg(name: str, is_max: bool, a: ArrayLike, axis: int | None, out: None,
            keepdims: bool | None) -> Any:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = ensure_arraylike(name, a)
    axis = None if axis is None else operator.index(axis)
    keepdims = bool(keepdims)
    arg = reductions.argmax if is_max else reductions.argmin
    if not _is_inexact(a.dtype):
        return arg(a, axis=axis, keepdims=keepdims)
    nan = _isnan(a)
    res = arg(lax.select_n(nan, a, lax.full_like(a, -np.inf if is_max else np.inf)),
              axis=axis, keepdims=keepdims)
    all_nan = reductions.all(nan, axis=axis, keepdims=keepdims)
    return lax.select_n(all_nan, res, lax.full_like(res, -1))


def nanargmax(a: ArrayLike, axis: int | None = None, out: None = None,
              keepdims: bool | None = None) -> Any:
    """Mirrors ``jax.numpy.nanargmax``: -1 for an all-NaN slice (numpy raises)."""
    return _nanarg("nanargmax", True, a, axis, out, keepdims)


def nanargmin(a: ArrayLike, axis: int | None = None, out: None = None,
              keepdims: bool | None = None) -> Any:
    """Mirrors ``jax.numpy.nanargmin``: -1 for an all-NaN slice (numpy raises)."""
    return _nanarg("nanargmin", False, a, axis, out, keepdims)
