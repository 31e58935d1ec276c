"""Selection by condition: where (one and three arguments), nonzero, argwhere and
flatnonzero.

Mirrors ``jax.numpy.where`` and ``jax.numpy.nonzero``. The one-argument forms need
concrete values (their result shape depends on the data) unless ``size`` is given,
as in JAX; with ``size`` a traced input is handled by a scatter of the positions.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.lax import cumulative, lax, slicing
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.creation import asarray
from tinyxla._src.numpy.shape import stack

ArrayLike = Any


def where(condition: ArrayLike, x: ArrayLike | None = None, y: ArrayLike | None = None, /, *,
          size: int | None = None, fill_value: Any = None) -> Any:
    """Mirrors ``jax.numpy.where``: elements of x where condition holds, else of y.

    With only ``condition``, it is ``nonzero(condition, size=size, fill_value=fill_value)``.
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where "
                         "function.")
    promotion.check_arraylike("where", condition, x, y)
    return where_arrays(condition, x, y)


def where_arrays(condition: Any, x: Any, y: Any) -> Any:
    """The three-argument where on array-likes (JAX's ``util._where``): x and y promote to a
    common dtype, then all three broadcast; a 0-d condition selects whole arrays."""
    condition = promotion.ensure_array(condition)
    if condition.dtype != dtypes.bool_dtype:
        condition = lax.ne(condition, lax.full_like(condition, 0))
    x, y = promotion.promote_dtypes(x, y)
    if condition.ndim == 0:
        x, y = promotion.broadcast_arrays_of(x, y)
    else:
        condition, x, y = promotion.broadcast_arrays_of(condition, x, y)
    return lax.select_n(condition, y, x)


def nonzero(a: ArrayLike, *, size: int | None = None,
            fill_value: None | ArrayLike | tuple[ArrayLike, ...] = None) -> tuple[Any, ...]:
    """Mirrors ``jax.numpy.nonzero``: the indices of the non-zero elements, one array per axis.

    ``size`` pads (with ``fill_value``, default 0) or truncates the result. Unlike JAX,
    the values are read on the host, so under tracing this needs concrete input.
    """
    arr = promotion.ensure_arraylike("nonzero", a)
    if arr.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    index_dtype = dtypes.default_int_dtype()
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * arr.ndim
    if size is not None and len(fills) != arr.ndim:
        raise ValueError(f"fill_value must be a scalar or a tuple of length {arr.ndim}; "
                         f"got {fill_value}")
    if isinstance(arr, core.Tracer):
        if size is None:
            count = lax.reduce_sum(lax.convert_element_type(_nonzero_mask(arr), np.int32),
                                   tuple(range(arr.ndim)))  # JAX's error names the count
            raise errors.ConcretizationTypeError(
                count, "The size argument of jnp.nonzero must be statically specified to use "
                     "jnp.nonzero within JAX transformations.")
        return _traced_nonzero(arr, int(size), fills, index_dtype)
    with core.set_current_trace(core.EVAL_TRACE):  # a concrete array made inside a trace
        found = np.nonzero(np.asarray(_nonzero_mask(arr)))
    if size is not None:
        found = tuple(np.concatenate([f[:size], np.full(max(0, size - len(f)),
                                                         0 if v is None else v)])
                      for f, v in zip(found, fills))
    return tuple(asarray(np.asarray(f, dtype=index_dtype)) for f in found)


def _nonzero_mask(arr: Any) -> Any:
    """``arr != 0`` on the device, for the eager and the traced path alike: the kernels'
    comparison reads float32/float64/bfloat16 denormals as zero (DAZ, as XLA:CPU), which
    numpy's host-side test would not."""
    return arr if arr.dtype == dtypes.bool_dtype else lax.ne(arr, lax.full_like(arr, 0))


def _traced_nonzero(arr: Any, size: int, fills: tuple[Any, ...], index_dtype: np.dtype
                    ) -> tuple[Any, ...]:
    """nonzero of a traced array: the k-th true element's flat position is scattered to
    slot k (slots past ``size`` drop), then unravelled per axis."""
    flat = lax.reshape(arr, (int(np.prod(arr.shape)),))
    mask = _nonzero_mask(flat)
    count = cumulative.cumsum(lax.convert_element_type(mask, index_dtype))
    one = lax.full((), 1, index_dtype)
    slots = lax.select(mask, lax.sub(count, one), lax.full_like(count, size))
    positions = lax.iota(index_dtype, flat.shape[0])
    dnums = slicing.ScatterDimensionNumbers((), (0,), (0,))
    taken = slicing.scatter(lax.full((size,), 0, index_dtype), lax.reshape(slots, (flat.shape[0], 1)),
                            positions, dnums, mode="drop")
    filled = lax.lt(lax.iota(index_dtype, size), lax.full((size,), count[-1], index_dtype)) \
        if flat.shape[0] else lax.full((size,), False, np.bool_)
    out = []
    for axis in range(arr.ndim - 1, -1, -1):
        n = lax.full((size,), arr.shape[axis], index_dtype)
        out.append(lax.rem(taken, n))
        taken = lax.div(taken, n)
    return tuple(lax.select(filled, c, lax.full((size,), 0 if v is None else v, index_dtype))
                 for c, v in zip(reversed(out), fills))


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Mirrors ``jax.numpy.flatnonzero``: the indices of the non-zero elements of the
    flattened array (concrete input, as ``nonzero``)."""
    arr = promotion.ensure_arraylike("flatnonzero", a)
    return nonzero(lax.reshape(arr, (int(np.prod(arr.shape)),)), size=size,
                   fill_value=fill_value)[0]


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Mirrors ``jax.numpy.argwhere``: the (N, ndim) indices of the non-zero elements
    (concrete input, as ``nonzero``); for a 0-d input it is (N, 0), as numpy."""
    arr = promotion.ensure_arraylike("argwhere", a)
    if arr.ndim == 0:
        found = nonzero(lax.reshape(arr, (1,)), size=size, fill_value=fill_value)[0]
        return lax.full((found.shape[0], 0), 0, found.dtype)
    return stack(nonzero(arr, size=size, fill_value=fill_value), axis=-1)
