"""Logarithmic ranges: logspace and geomspace (linspace and arange live in ``creation``).

Mirrors ``jax._src.numpy.array_creation.logspace`` / ``geomspace``: both are
``base ** linspace(...)`` computed in the inexact dtype and cast at the end, so bounds may
be arrays (broadcast, samples along ``axis``) and the results are differentiable.
"""
from __future__ import annotations

import operator
from typing import Any

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, ufuncs
from tinyxla._src.numpy.creation import linspace
from tinyxla._src.numpy.promotion import canonicalize_axis

ArrayLike = Any


def _bounds(name: str, start: ArrayLike, stop: ArrayLike, dtype: Any) -> tuple[Any, Any, Any]:
    """(start, stop) in the computation dtype, and the output dtype."""
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, name)
    computation = dtypes.to_inexact_dtype(dtype)
    start, stop = promotion.ensure_arraylike(name, start, stop)
    return (lax.convert_element_type(start, computation),
            lax.convert_element_type(stop, computation), dtype)


def logspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
             base: ArrayLike = 10.0, dtype: Any = None, axis: int = 0) -> Any:
    """Mirrors ``jax.numpy.logspace``: ``base ** linspace(start, stop, num)``."""
    num = operator.index(num)
    axis = operator.index(axis)
    start, stop, dtype = _bounds("logspace", start, stop, dtype)
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return lax.convert_element_type(ufuncs.power(base, lin), dtype)


def geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
              dtype: Any = None, axis: int = 0) -> Any:
    """Mirrors ``jax.numpy.geomspace``: a geometric progression from start to stop (both
    of start's sign; a zero bound gives NaNs, as in JAX, where numpy raises)."""
    num = operator.index(num)
    axis = operator.index(axis)
    start, stop, dtype = _bounds("geomspace", start, stop, dtype)
    sign = ufuncs.sign(start)
    res = ufuncs.multiply(sign, logspace(ufuncs.log10(ufuncs.divide(start, sign)),
                                         ufuncs.log10(ufuncs.divide(stop, sign)),
                                         num, endpoint=endpoint, base=10.0,
                                         dtype=start.dtype, axis=0))
    axis = canonicalize_axis(axis, res.ndim)
    if axis:
        res = lax.transpose(res, (*range(1, axis + 1), 0, *range(axis + 1, res.ndim)))
    return lax.convert_element_type(res, dtype)
