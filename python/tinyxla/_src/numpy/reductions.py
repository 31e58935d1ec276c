"""Reductions: sum, prod, max, min, all, any, mean, var, std, argmax, argmin, nansum, nanmean.

Mirrors ``jax._src.numpy.reductions`` (and argmax/argmin from ``lax_numpy``), including
JAX's dtype rules: sum/prod promote small integers and bool to the default int (uint)
dtype, accumulate float16/bfloat16 in float32, and mean/var/std of integers give the
default float dtype. Results are never weakly typed, as in JAX.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.promotion import ensure_arraylike

ArrayLike = Any
Axis = None | int | Sequence[int]

_BOOL = dtypes.bool_dtype
_LOW_PRECISION = (dtypes.float16, dtypes.bfloat16)


def _is_inexact(dt: np.dtype) -> bool:
    return dt.kind in "fc" or dt == dtypes.bfloat16


def _is_complex(dt: np.dtype) -> bool:
    return dt.kind == "c"


def _upcast_f16(dt: np.dtype) -> np.dtype:
    return dtypes.float32 if dt in _LOW_PRECISION else dt


def _promote_integer_dtype(dt: np.dtype) -> np.dtype:
    """bool and integers narrower than the default become the default int/uint (JAX's rule)."""
    if dt == _BOOL:
        return dtypes.default_int_dtype()
    if dt.kind == "u":
        default = dtypes.default_uint_dtype()
        return default if dt.itemsize < default.itemsize else dt
    if dt.kind == "i":
        default = dtypes.default_int_dtype()
        return default if dt.itemsize < default.itemsize else dt
    return dt


def _check_where(name: str, where: ArrayLike | None) -> Any:
    if where is None:
        return None
    where = ensure_arraylike(name, where)
    if where.dtype != _BOOL:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={where.dtype!r}.")
    return where


def _ensure_optional_axes(axis: Any) -> Any:
    """None, an int or a tuple of ints, as JAX forces it (``'float' object is not iterable``)."""
    if axis is None:
        return None
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(i) for i in axis)


def _reduction_dims(ndim: int, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
    dims = tuple(promotion.canonicalize_axis(a, ndim) for a in axes)
    if len(set(dims)) != len(dims):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return dims


def _init_value(dt: np.dtype, value: Any) -> Any:
    """The reduction's identity in dtype ``dt`` (infinities become the int extremes)."""
    if dt == _BOOL:
        return bool(value > 0)
    if dt.kind in "iu" and np.isinf(value):
        info = dtypes.iinfo(dt)
        return int(info.min if value < 0 else info.max)
    return value


_LAX_REDUCERS: dict[str, Callable[[Any, Sequence[int]], Any]] = {
    "add": lambda x, dims: lax.reduce_sum(x, dims),
    "mul": lambda x, dims: lax.reduce_prod(x, dims),
    "max": lambda x, dims: lax.reduce_max(x, dims),
    "min": lambda x, dims: lax.reduce_min(x, dims),
    "and": lambda x, dims: lax.reduce_and(x, dims),
    "or": lambda x, dims: lax.reduce_or(x, dims),
}
_LAX_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, y: lax.add(x, y), "mul": lambda x, y: lax.mul(x, y),
    "max": lambda x, y: lax.max(x, y), "min": lambda x, y: lax.min(x, y),
    "and": lambda x, y: lax.bitwise_and(x, y), "or": lambda x, y: lax.bitwise_or(x, y),
}


def _reduction(a: ArrayLike, name: str, op: str, init_val: Any, *, has_identity: bool = True,
               preproc: Callable[[Any], Any] | None = None, bool_op: str | None = None,
               upcast_f16_for_computation: bool = False, axis: Axis = None,
               dtype: Any = None, out: None = None, keepdims: bool = False,
               initial: ArrayLike | None = None, where_: ArrayLike | None = None,
               promote_integers: bool = False) -> Any:
    """JAX's ``_reduction``: dtype rules, where masks, ``initial`` and keepdims around one lax reduce."""
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = ensure_arraylike(name, a)
    where_ = _check_where(name, where_)
    if initial is None and not has_identity and where_ is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    a = preproc(a) if preproc else a
    dims = _reduction_dims(a.ndim, axis)
    if initial is None and not has_identity:
        if not builtins.all(a.shape[d] >= 1 for d in dims):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is None:
        result_dtype = _promote_integer_dtype(a.dtype) if promote_integers else a.dtype
    else:
        result_dtype = dtypes.check_user_dtype_supported(dtype, name)
    if upcast_f16_for_computation and _is_inexact(result_dtype):
        computation_dtype = _upcast_f16(result_dtype)
    else:
        computation_dtype = result_dtype
    computation_dtype = lax._canonical_dtype(computation_dtype)
    if a.dtype is not computation_dtype:
        a = lax._convert_element_type(a, computation_dtype, False)
    if computation_dtype is _BOOL:
        op = bool_op or op
    init = _init_value(computation_dtype, init_val)
    if where_ is not None:
        a = promotion.broadcast_to_shape(a, promotion.broadcast_shapes(a.shape, where_.shape))
        a = lax.select_n(promotion.broadcast_to_shape(where_, a.shape),
                         lax.full_like(a, init), a)
    result = _LAX_REDUCERS[op](a, dims)
    if initial is not None:
        initial_arr = lax.convert_element_type(promotion.ensure_array(initial), a.dtype)
        if initial_arr.shape != ():
            raise ValueError("initial value must be a scalar. "
                             f"Got array of shape {initial_arr.shape}")
        result = _LAX_BINARY[op](initial_arr, result)
    if keepdims:
        result = lax.expand_dims(result, dims)
    if dtype is not None:
        # JAX converts with the dtype as the user gave it: a truncated float64 warns again.
        return lax.convert_element_type(result, dtype)
    return lax._convert_element_type(result, lax._canonical_dtype(result_dtype), False)


def _cast_to_numeric(a: Any) -> Any:
    # promote_dtypes_numeric of one array: bool becomes int32, keeping the weak type.
    return lax._convert_element_type(a, dtypes.int32, a.weak_type) if a.dtype is _BOOL else a


def _cast_to_bool(a: Any) -> Any:
    if _is_complex(a.dtype):
        a = lax.real(a)
    return lax.convert_element_type(a, _BOOL)


def sum(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,  # noqa: A001
        keepdims: bool = False, initial: ArrayLike | None = None,
        where: ArrayLike | None = None, promote_integers: bool = True) -> Any:
    """Mirrors ``jax.numpy.sum``: bool and narrow ints sum in the default int dtype."""
    return _reduction(a, "sum", "add", 0, preproc=_cast_to_numeric, bool_op="or",
                      upcast_f16_for_computation=dtype is None,
                      axis=_ensure_optional_axes(axis), dtype=dtype, out=out,
                      keepdims=keepdims, initial=initial, where_=where,
                      promote_integers=promote_integers)


def prod(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, initial: ArrayLike | None = None,
         where: ArrayLike | None = None, promote_integers: bool = True) -> Any:
    """Mirrors ``jax.numpy.prod``: bool and narrow ints multiply in the default int dtype."""
    return _reduction(a, "prod", "mul", 1, preproc=_cast_to_numeric, bool_op="and",
                      upcast_f16_for_computation=dtype is None,
                      axis=_ensure_optional_axes(axis), dtype=dtype, out=out,
                      keepdims=keepdims, initial=initial, where_=where,
                      promote_integers=promote_integers)


def max(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,  # noqa: A001
        initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.max``; an empty reduction without ``initial`` raises ValueError."""
    return _reduction(a, "max", "max", -np.inf, has_identity=False, bool_op="or",
                      axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                      initial=initial, where_=where)


def min(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,  # noqa: A001
        initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.min``; an empty reduction without ``initial`` raises ValueError."""
    return _reduction(a, "min", "min", np.inf, has_identity=False, bool_op="and",
                      axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                      initial=initial, where_=where)


amax = max
amin = min


def ptp(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.ptp``: max - min along ``axis``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    hi = max(a, axis=axis, keepdims=keepdims)
    lo = min(a, axis=axis, keepdims=keepdims)
    return lax.sub(hi, lo)


def all(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,  # noqa: A001
        *, where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.all``."""
    return _reduction(a, "all", "and", True, preproc=_cast_to_bool,
                      axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                      where_=where)


def any(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,  # noqa: A001
        *, where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.any``."""
    return _reduction(a, "any", "or", False, preproc=_cast_to_bool,
                      axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                      where_=where)


def _count(a: Any, axis: Axis, keepdims: bool, where: Any, dtype: np.dtype) -> Any:
    """The number of elements reduced over, as a ``dtype`` array (JAX's ``_count``)."""
    if where is None:
        if axis is not None:
            # JAX reads a.shape[axis] here: an axis out of range is its IndexError
            for ax in (axis if isinstance(axis, tuple) else (axis,)):
                a.shape[ax]  # noqa: B018
        dims = _reduction_dims(a.ndim, axis)
        n = 1
        for d in dims:
            n *= a.shape[d]
        return lax.convert_element_type(n, dtype)
    where = promotion.broadcast_to_shape(where, a.shape)
    return sum(where, axis, dtype=dtype, keepdims=keepdims)


def mean(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, *, where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.mean``: integers give the default float dtype; f16 accumulates in f32."""
    a = ensure_arraylike("mean", a)
    where = _check_where("mean", where)
    axis = _ensure_optional_axes(axis)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.mean is not supported.")
    if dtype is None:
        result_dtype = dtypes.to_inexact_dtype(a.dtype)
        computation_dtype = _upcast_f16(result_dtype)
    else:
        result_dtype = dtypes.check_user_dtype_supported(dtype, "mean")
        computation_dtype = result_dtype
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    total = sum(a, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    return lax.convert_element_type(lax.div(total, normalizer), result_dtype)


_mean = mean  # var's ``mean`` keyword shadows the function


def _var_promote_types(a_dtype: np.dtype, dtype: np.dtype | None) -> tuple[np.dtype, np.dtype]:
    if dtype is not None:
        if not _is_complex(dtype) and _is_complex(a_dtype):
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when computing the "
                "variance of an array of complex values. The semantics of numpy.var seem "
                "unclear in this case. Please comment on "
                "https://github.com/jax-ml/jax/issues/2283 if this behavior is important to you.")
        computation_dtype = dtype
    elif not _is_inexact(a_dtype):
        dtype = computation_dtype = dtypes.to_inexact_dtype(a_dtype)
    else:
        dtype = dtypes.to_floating_dtype(a_dtype)
        computation_dtype = a_dtype
    return _upcast_f16(computation_dtype), np.dtype(dtype)


def var(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: ArrayLike | None = None,
        mean: ArrayLike | None = None, correction: int | float | None = None) -> Any:
    """Mirrors ``jax.numpy.var``: NaN where the count minus ``correction`` (ddof) is not positive."""
    if correction is None:
        correction = ddof
    elif not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    a = ensure_arraylike("var", a)
    axis = _ensure_optional_axes(axis)
    where = _check_where("var", where)
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "var")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.var is not supported.")
    computation_dtype, dtype = _var_promote_types(a.dtype, dtype)
    a = lax.convert_element_type(a, computation_dtype)
    if mean is None:
        a_mean = _mean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        a_mean = lax.convert_element_type(ensure_arraylike("var", mean), computation_dtype)
    centered = lax.sub(a, promotion.broadcast_to_shape(a_mean, a.shape))
    if _is_complex(computation_dtype):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        computation_dtype = centered.dtype
    else:
        centered = lax.square(centered)
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    normalizer = lax.sub(normalizer, lax.convert_element_type(correction, computation_dtype))
    total = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    result = lax.convert_element_type(lax.div(total, normalizer), dtype)
    if not _is_inexact(result.dtype):
        # JAX's where(normalizer > 0, result, nan) promotes an integer result with the
        # weak float nan: the default float, weakly typed.
        result = lax._convert_element_type(result, dtypes.default_float_dtype(), True)
    positive = lax.gt(normalizer, lax.convert_element_type(0, normalizer.dtype))
    positive, result = promotion.broadcast_arrays_of(positive, result)
    return lax.select_n(positive, lax.full_like(result, np.nan), result)


def std(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: ArrayLike | None = None,
        mean: ArrayLike | None = None, correction: int | float | None = None) -> Any:
    """Mirrors ``jax.numpy.std``: the square root of var."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "std")
        if not _is_inexact(dtype):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.std is not supported.")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                        mean=mean, correction=correction))


def _arg_extreme(name: str, is_max: bool, a: ArrayLike, axis: int | None, out: None,
                 keepdims: bool | None) -> Any:
    arr = ensure_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    if axis is None:
        dims = tuple(range(arr.ndim))
        arr = lax.reshape(arr, (arr.size,))
        axis = 0
    else:
        axis = operator.index(axis)
        dims = None
    if arr.shape[axis] == 0:  # an out-of-range axis raises IndexError here, as in JAX
        raise ValueError(f"attempt to get {name} of an empty sequence")
    axis = promotion.canonicalize_axis(axis, arr.ndim)
    lax_fn = lax.argmax if is_max else lax.argmin
    result = lax_fn(arr, axis, dtypes.default_int_dtype())
    if keepdims:
        result = lax.expand_dims(result, (axis,) if dims is None else dims)
    return result


def argmax(a: ArrayLike, axis: int | None = None, out: None = None,
           keepdims: bool | None = None) -> Any:
    """Mirrors ``jax.numpy.argmax``: the first index of the maximum; NaN counts as the maximum."""
    return _arg_extreme("argmax", True, a, axis, out, keepdims)


def argmin(a: ArrayLike, axis: int | None = None, out: None = None,
           keepdims: bool | None = None) -> Any:
    """Mirrors ``jax.numpy.argmin``: the first index of the minimum; NaN counts as the minimum."""
    return _arg_extreme("argmin", False, a, axis, out, keepdims)


def _isnan(a: Any) -> Any:
    return lax.ne(a, a)


def nansum(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
           keepdims: bool = False, initial: ArrayLike | None = None,
           where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nansum``: sum with NaNs counted as zero."""
    a = ensure_arraylike("nansum", a)
    _check_where("nansum", where)
    if _is_inexact(a.dtype):
        a = lax.select_n(_isnan(a), a, lax.full_like(a, 0))
    return sum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial,
               where=where)


def nanmean(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, where: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nanmean``: mean over the non-NaN elements."""
    a = ensure_arraylike("nanmean", a)
    where = _check_where("nanmean", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmean is not supported.")
    if not _is_inexact(a.dtype):
        return mean(a, axis, dtype, out, keepdims, where=where)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(a.dtype)
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "mean")
    not_nan = lax.bitwise_not(_isnan(a))
    normalizer = sum(not_nan, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), normalizer)
