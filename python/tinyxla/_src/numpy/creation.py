"""Array creation: array, asarray, zeros/ones/full/empty and their _like forms, eye, arange, linspace.

Mirrors ``jax._src.numpy.array_constructors`` and ``array_creation`` (plus eye, arange,
linspace from ``lax_numpy``), with JAX's dtype inference, weak types, truncation
warnings and errors. Host data (lists, numpy arrays, buffers) is converted with numpy
once, to its final dtype, and copied to the runtime once.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.array import _from_numpy
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.shape import broadcast_to, canonicalize_shape

ArrayLike = Any
_PY_SCALARS = promotion.PY_SCALAR_TYPES


def _stage_error(x: Any) -> TypeError:
    return TypeError(f"Error interpreting argument to stage as a JAX value. The problematic "
                     f"value is of type {type(x)} and was passed to stage at position 0.\n")


def _leaves(obj: Any, out: list[Any]) -> None:
    """The non-list, non-tuple leaves of a nested list/tuple, in order."""
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    else:
        out.append(obj)


def _invalid_value(x: Any) -> TypeError:
    return TypeError(f"Value '{x}' with dtype {np.asarray(x).dtype} is not a valid JAX array "
                     "type. Only arrays of numeric types are supported by JAX.")


def _promotion_operand(leaf: Any) -> Any:
    """What stands for a leaf in the dtype inference: its type for Python scalars, the
    leaf for arrays, and what np.asarray makes of anything else (as JAX falls back to)."""
    if type(leaf) in _PY_SCALARS:
        return type(leaf)
    if not (promotion.is_array(leaf) or isinstance(leaf, (np.ndarray, np.generic))):
        leaf = np.asarray(leaf)
    if np.dtype(leaf.dtype) not in dtypes._VALID_DTYPES:
        raise _invalid_value(leaf)
    return leaf


def _infer_dtype(leaves: list[Any]) -> tuple[np.dtype, bool]:
    if not leaves:
        return dtypes.default_float_dtype(), False
    operands: dict[Any, None] = {}
    arrays = []
    for leaf in leaves:
        op = _promotion_operand(leaf)
        if isinstance(op, type):
            operands[op] = None
        else:
            arrays.append(op)
    return dtypes.lattice_result_type(*operands, *arrays)


def _stack_leading(arrs: list[Any]) -> Any:
    """Stacks equally shaped arrays along a new leading axis (as JAX builds jnp.array lists)."""
    return lax.concatenate([lax.expand_dims(a, (0,)) for a in arrs], 0)


def array(object: Any, dtype: Any = None, *args: Any, copy: bool = True,  # noqa: A002
          order: str | None = "K", ndmin: int = 0, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.array``.

    Weakly typed only when the input is (a Python scalar, a weak array) and no dtype is
    given. Lists and tuples take the dtype JAX infers from their leaves. Arrays are
    immutable, so ``copy`` never copies; ``device`` is accepted and ignored (one device).
    """
    if args:
        if len(args) > 3:
            raise TypeError(f"array() takes at most 5 positional arguments but "
                            f"{len(args) + 2} were given")
        for i, name in enumerate(["copy", "order", "ndmin"]):
            if i < len(args) and [copy, order, ndmin][i] != [True, "K", 0][i]:
                raise TypeError(f"array() got multiple values for argument '{name}'")
        copy, order, ndmin = (list(args) + [copy, order, ndmin][len(args):])[:3]
        warnings.warn("Passing the copy, order, and ndmin arguments to jnp.array positionally "
                      "is deprecated. Use keyword arguments instead.", DeprecationWarning,
                      stacklevel=2)
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "array")
    weak = dtype is None and dtypes.is_weakly_typed(object)
    if isinstance(object, np.ma.MaskedArray):
        raise ValueError("numpy masked arrays are not supported as direct inputs to JAX "
                         "functions. Use arr.filled() to convert the value to a standard "
                         "numpy array.")
    if type(object) in _PY_SCALARS:
        if dtype is None:
            dtype = dtypes._operand(object)[0]
            if type(object) is int:
                dtypes.check_python_int_range(object, dtype)
        out: Any = np.asarray(object, dtype=dtype)
    elif promotion.is_array(object):
        out = object
        dtype = dtype or object.dtype
    else:
        m = getattr(object, "__jax_array__", None)
        if m is not None:
            return array(m(), dtype, copy=copy, ndmin=ndmin)
        if isinstance(object, (np.ndarray, np.generic)):
            if object.dtype not in dtypes._VALID_DTYPES:
                if dtype is None:
                    raise _stage_error(object)
                raise _invalid_value(object)
            out = object
            dtype = dtype or dtypes.canonicalize_dtype(object.dtype)
        elif isinstance(object, (list, tuple)):
            leaves: list[Any] = []
            _leaves(object, leaves)
            if any(leaf is None for leaf in leaves):
                raise ValueError("None is not a valid value for jnp.array")
            leaves = [leaf.__jax_array__() if hasattr(leaf, "__jax_array__") else leaf
                      for leaf in leaves]
            if dtype is None:
                dtype = _infer_dtype(leaves)[0]
            if any(promotion.is_array(leaf) for leaf in leaves):
                out = _stack_leading([array(e, dtype=dtype) for e in object]) if object else \
                    np.array([], dtype=dtype)
            else:
                out = np.asarray(object, dtype=dtype)
        elif object is None:
            raise ValueError("None is not a valid value for jnp.array")
        else:
            # Buffers (bytes, memoryview...) as numpy sees them; anything else (a range)
            # as np.asarray makes it, as JAX falls back to.
            try:
                out = np.asarray(memoryview(object))
            except TypeError:
                out = np.asarray(object)
            if out.dtype not in dtypes._VALID_DTYPES:
                raise _invalid_value(object)
            dtype = dtype or dtypes.canonicalize_dtype(out.dtype)
    if isinstance(out, (np.ndarray, np.generic)):
        # Host data goes to the runtime once, already in its final dtype.
        out = _from_numpy(np.asarray(out).astype(dtype, copy=False))
    result = promotion.convert(out, dtype, weak)
    if ndmin > result.ndim:
        result = lax.reshape(result, (1,) * (ndmin - result.ndim) + tuple(result.shape))
    return result


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None,
            device: Any = None) -> Any:
    """Mirrors ``jax.numpy.asarray``: ``array`` that returns matching arrays unchanged."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "asarray")
    if dtype is None and promotion.is_array(a):
        return a
    return array(a, dtype=dtype, copy=bool(copy), order=order, device=device)


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


def _canonicalize_dim(d: Any, context: str) -> int:
    return canonicalize_shape((d,), context)[0]


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None, *,
        device: Any = None) -> Any:
    """Mirrors ``jax.numpy.eye``: ones on the k-th diagonal of an N x M matrix."""
    dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "eye")
    offset = promotion.ensure_arraylike("eye", k)
    if not (offset.shape == () and offset.dtype.kind in "iu"):
        raise ValueError(f"k must be a scalar integer; got {k}")
    n = _canonicalize_dim(N, "argument of 'N' jnp.eye().")
    m = n if M is None else _canonicalize_dim(M, "argument 'M' of jnp.eye().")
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

