"""Array creation: zeros/ones/full/empty and their _like forms, eye, arange, linspace, astype.

Mirrors ``jax._src.numpy.array_creation`` (plus eye, arange, linspace from
``lax_numpy``), with JAX's dtype inference, weak types, truncation warnings and errors.
``array`` and ``asarray`` live in ``array_constructors``, below the promotion and shape
helpers that need them, and are re-exported here as the rest of the creation family.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.array_constructors import array, asarray
from tinyxla._src.numpy.shape import broadcast_to, canonicalize_shape

ArrayLike = Any


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.astype`` (and ``Array.astype``): a strong array of ``dtype``.

    ``dtype=None`` means the default float dtype. Complex to real warns as JAX does;
    complex to bool tests against zero. Arrays are immutable, so ``copy`` is ignored.
    """
    x = promotion.ensure_arraylike("astype", x)
    dtype = (dtypes.default_float_dtype() if dtype is None
             else dtypes.check_user_dtype_supported(dtype, "astype"))
    if x.dtype.kind == "c":
        if dtype.kind in "iuf" or dtype == dtypes.bfloat16:
            warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. "
                          "Please first use jnp.real or jnp.imag to take the real/imaginary "
                          "component of your input.", DeprecationWarning, stacklevel=2)
            x = lax.real(x)  # what the cast keeps, without lax's own ComplexWarning
        elif dtype == dtypes.bool_dtype:
            x = lax.ne(x, lax.full_like(x, 0))
    return promotion.convert(x, dtype, False)


def copy(a: ArrayLike, order: str | None = None) -> Any:
    """Mirrors ``jax.numpy.copy``: a new array with a's values."""
    promotion.check_arraylike("copy", a)
    if order not in (None, "K"):
        raise NotImplementedError("Only implemented for order='K'")
    return lax._array_copy(promotion.ensure_array(a))


# ---------------------------------------------------------------------------------------
# Filled arrays


def _forgot_shape_tuple(name: str, shape: Any, dtype: Any) -> None:
    if isinstance(dtype, int) and isinstance(shape, int):
        raise TypeError(f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally "
                        f"write `jax.numpy.{name}({shape}, {dtype})` when you meant "
                        f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple "
                        "argument for the shape?")


def _full_shape(shape: Any) -> tuple[int, ...]:
    shape = canonicalize_shape(shape)
    if any(d < 0 for d in shape):
        raise TypeError("broadcast_in_dim shape must have every element be nonnegative, "
                        f"got {shape}.")
    return shape


def _filled(name: str, shape: Any, value: Any, dtype: Any) -> Any:
    _forgot_shape_tuple(name, shape, dtype)
    dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, name)
    return lax.full(_full_shape(shape), value, dtype)


def zeros(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.zeros`` (default dtype float32, float64 with x64)."""
    return _filled("zeros", shape, 0, dtype)


def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.ones`` (default dtype float32, float64 with x64)."""
    return _filled("ones", shape, 1, dtype)


def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.empty``: zeros, as in JAX (buffers are never uninitialised)."""
    return _filled("empty", shape, 0, dtype)


def full(shape: Any, fill_value: ArrayLike, dtype: Any = None, *, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.full``: the dtype and weak type follow ``fill_value`` by default."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "full")
    promotion.check_arraylike("full", fill_value)
    if np.ndim(fill_value) == 0:
        shape = _full_shape(shape)
        if dtype is None:
            dtype, weak = dtypes._operand(fill_value)
        else:
            weak = False
        if promotion.is_array(fill_value):
            fill = promotion.convert(fill_value, dtype, weak)
            return lax.broadcast_in_dim(fill, shape, ()) if shape else fill
        return promotion.convert(lax.full(shape, fill_value, dtype), dtype, weak)
    return broadcast_to(asarray(fill_value, dtype=dtype), shape)


def _like(name: str, a: Any, fill_value: Any, dtype: Any, shape: Any) -> Any:
    if not (hasattr(a, "dtype") and hasattr(a, "shape")):
        promotion.check_arraylike(name, a)
        a = promotion.ensure_array(a)
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, name)
    if shape is not None:
        shape = _full_shape(shape)
    if np.ndim(fill_value) != 0:
        shape = tuple(a.shape) if shape is None else shape
        dtype = dtypes.result_type(a) if dtype is None else dtype
        return broadcast_to(asarray(fill_value, dtype=dtype), shape)
    weak = dtype is None and dtypes.is_weakly_typed(a)
    dtype = np.dtype(a.dtype) if dtype is None else dtype
    shape = tuple(a.shape) if shape is None else shape
    return promotion.convert(lax.full(shape, fill_value, dtype), dtype, weak)


def zeros_like(a: ArrayLike, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.zeros_like`` (keeps a's weak type when no dtype is given)."""
    return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a: ArrayLike, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.ones_like`` (keeps a's weak type when no dtype is given)."""
    return _like("ones_like", a, 1, dtype, shape)


def empty_like(prototype: ArrayLike, dtype: Any = None, shape: Any = None, *,
               device: Any = None) -> Any:
    """Mirrors ``jax.numpy.empty_like``: zeros (JAX names it ones_like in its errors, as here)."""
    return _like("ones_like", prototype, 0, dtype, shape)


def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: Any = None, shape: Any = None, *,
              device: Any = None) -> Any:
    """Mirrors ``jax.numpy.full_like``."""
    if hasattr(a, "dtype") and hasattr(a, "shape"):
        promotion.check_arraylike("full_like", 0, fill_value)
    else:
        promotion.check_arraylike("full_like", a, fill_value)
    return _like("full_like", a, fill_value, dtype, shape)


# ---------------------------------------------------------------------------------------
# Ranges and identities


_INT32_MIN, _INT32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)


def _canonicalize_dim(d: Any, context: str) -> int:
    return canonicalize_shape((d,), context)[0]


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None, *,
        device: Any = None) -> Any:
    """Mirrors ``jax.numpy.eye``: ones on the k-th diagonal of an N x M matrix."""
    dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "eye")
    if isinstance(k, int):
        # As JAX: a Python int offset is clipped to int32's range, so any k is accepted
        # (a diagonal that far out is empty either way) rather than overflowing.
        k = max(_INT32_MIN, min(operator.index(k), _INT32_MAX))
    offset = promotion.ensure_arraylike("eye", k)
    if not (offset.shape == () and offset.dtype.kind in "iu"):
        raise ValueError(f"k must be a scalar integer; got {k}")
    n = _canonicalize_dim(N, "argument of 'N' jnp.eye()")
    m = n if M is None else _canonicalize_dim(M, "argument 'M' of jnp.eye()")
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    i = lax.broadcasted_iota(offset.dtype, (n, m), 0)
    j = lax.broadcasted_iota(offset.dtype, (n, m), 1)
    on_diag = lax.eq(lax.add(i, promotion.convert(offset, offset.dtype, False)), j)
    return lax.convert_element_type(on_diag, dtype)


def identity(n: int, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.identity``."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "identity")
    return eye(n, dtype=dtype)


def _concrete_scalar(x: Any) -> Any:
    """A Python/numpy scalar for an arange bound (a concrete 0-d Array gives its value)."""
    if promotion.is_array(x) and x.ndim == 0:
        return np.asarray(x).item()
    return x


def arange(start: ArrayLike, stop: ArrayLike | None = None, step: ArrayLike | None = None,
           dtype: Any = None, *, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.arange``: dtype from the bounds (ints give int32, floats float32).

    The bounds must be concrete. f16/bf16 ranges with a step are computed in float32, as JAX.
    """
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "arange")
    for pos, v in enumerate((start, stop, step)):
        if v is not None and not promotion.is_arraylike(v):
            raise TypeError("arange requires ndarray, scalar, or None arguments, "
                            f"got {type(v)} at position {pos}.")
    start_name = "stop" if stop is None and step is None else "start"
    for name, val in ((start_name, start), ("stop", stop), ("step", step)):
        if val is not None and np.ndim(val) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={val}")
        if isinstance(val, core.Tracer):
            raise errors.ConcretizationTypeError(
                val, f"It arose in the jnp.arange argument '{name}'")
    start, stop, step = (_concrete_scalar(v) for v in (start, stop, step))
    if dtype is None:
        dtype = dtypes.result_type(start, *(x for x in (stop, step) if x is not None))
    if any(np.iscomplexobj(v) for v in (start, stop, step) if v is not None):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer "
                         "supported starting in JAX v0.10.0.")
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = (dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype)
        size = max(0, int(np.ceil((stop - start) / step)))
        iota = lax.broadcasted_iota(working, (size,), 0)
        out = lax.add(lax.convert_element_type(start, working),
                      lax.mul(lax.convert_element_type(step, working), iota))
        return lax.convert_element_type(out, dtype)
    if start == 0:
        return lax.broadcasted_iota(dtype, (max(0, int(np.ceil(stop))),), 0)
    iota = lax.broadcasted_iota(dtype, (max(0, int(np.ceil(stop - start))),), 0)
    return lax.add(lax.convert_element_type(start, dtype), iota)


def linspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *,
             device: Any = None) -> Any:
    """Mirrors ``jax.numpy.linspace``: start*(1-t) + stop*t, so both endpoints are exact.

    Array bounds broadcast and the samples run along ``axis``; integer dtypes floor.
    """
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = promotion.ensure_arraylike("linspace", start, stop)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "linspace")
    computation = dtypes.to_inexact_dtype(dtype)
    start = lax.convert_element_type(start, computation)
    stop = lax.convert_element_type(stop, computation)
    bounds_shape = list(promotion.broadcast_shapes(start.shape, stop.shape))
    b_start = promotion.broadcast_to_shape(start, tuple(bounds_shape))
    b_stop = promotion.broadcast_to_shape(stop, tuple(bounds_shape))
    axis = len(bounds_shape) + axis + 1 if axis < 0 else axis
    bounds_shape.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = lax.div(lax.sub(b_stop, b_start), lax.convert_element_type(div, computation))
        iota_shape = [1] * len(bounds_shape)
        iota_shape[axis] = div
        real = dtypes.to_floating_dtype(computation)
        step = lax.div(lax.reshape(lax.broadcasted_iota(real, (div,), 0), tuple(iota_shape)),
                       lax.convert_element_type(div, real))
        step = lax.convert_element_type(step, computation)
        full_shape = tuple(bounds_shape[:axis] + [div] + bounds_shape[axis + 1:])
        step = promotion.broadcast_to_shape(step, full_shape)
        lo = promotion.broadcast_to_shape(lax.reshape(b_start, tuple(bounds_shape)), full_shape)
        hi = promotion.broadcast_to_shape(lax.reshape(b_stop, tuple(bounds_shape)), full_shape)
        one = lax.full_like(step, 1)
        out = lax.add(lax.mul(lo, lax.sub(one, step)), lax.mul(hi, step))
        if endpoint:
            out = lax.concatenate([out, lax.expand_dims(b_stop, (axis,))], axis)
    elif num == 1:
        delta = lax.full((), np.nan, computation) if endpoint else lax.sub(b_stop, b_start)
        out = lax.reshape(b_start, tuple(bounds_shape))
    else:
        empty_shape = list(promotion.broadcast_shapes(start.shape, stop.shape))
        empty_shape.insert(axis, 0)
        delta = lax.full((), np.nan, computation)
        out = lax.full(tuple(empty_shape), 0, dtype)
    if dtype.kind in "iu" and out.dtype.kind not in "iu":
        out = lax.floor(out)
    result = lax.convert_element_type(out, dtype)
    return (result, delta) if retstep else result

