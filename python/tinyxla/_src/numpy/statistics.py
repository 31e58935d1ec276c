"""Summary statistics: average, count_nonzero, cov and corrcoef.

Mirrors ``jax._src.numpy.reductions.average`` / ``count_nonzero`` and
``lax_numpy.cov`` / ``corrcoef``: negative frequency and analytic weights are taken by
absolute value (numpy raises), and corrcoef clips to [-1, 1].
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, reductions, ufuncs
from tinyxla._src.numpy.products import dot
from tinyxla._src.numpy.promotion import ensure_arraylike

ArrayLike = Any
Axis = None | int | Sequence[int]


def count_nonzero(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.count_nonzero``: the default int dtype."""
    a = ensure_arraylike("count_nonzero", a)
    return reductions.sum(lax.ne(a, lax.full_like(a, 0)), axis=axis,
                          dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def average(a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None,
            returned: bool = False, keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.average``: the (weighted) mean; with ``returned`` also the
    sum of the weights, broadcast to the average's shape."""
    axis = reductions._ensure_optional_axes(axis)
    if weights is None:
        a = ensure_arraylike("average", a)
        a, = promotion.promote_dtypes_inexact(a)
        avg = reductions.mean(a, axis=axis, keepdims=keepdims)
        dims = reductions._reduction_dims(a.ndim, axis)
        weights_sum = lax.full((), math.prod(a.shape[d] for d in dims), avg.dtype)
    else:
        a, weights = ensure_arraylike("average", a, weights)
        a, weights = promotion.promote_dtypes_inexact(a, weights)
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            dims = reductions._reduction_dims(a.ndim, axis)
            if weights.shape != tuple(a.shape[d] for d in dims):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            perm = tuple(int(i) for i in np.argsort(dims))
            weights = lax.broadcast_in_dim(lax.transpose(weights, perm), a.shape,
                                           tuple(sorted(dims)))
        weights_sum = reductions.sum(weights, axis=axis, keepdims=keepdims)
        avg = lax.div(reductions.sum(ufuncs.multiply(a, weights), axis=axis, keepdims=keepdims),
                      weights_sum)
    if returned:
        if avg.shape != weights_sum.shape:
            weights_sum = promotion.broadcast_to_shape(weights_sum, avg.shape)
        return avg, weights_sum
    return avg


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: ArrayLike | None = None,
        aweights: ArrayLike | None = None, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.cov``."""
    if y is not None:
        m, y = promotion.promote_args_inexact("cov", m, y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        m, = promotion.promote_args_inexact("cov", m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got {dtype=}")
    X = lax.reshape(m, (1,) * (2 - m.ndim) + m.shape)
    if not rowvar and m.ndim != 1:
        X = lax.transpose(X, (1, 0))
    if X.shape[0] == 0:
        return lax.full((0, 0), 0, dtypes.default_float_dtype())
    if y is not None:
        y2 = lax.reshape(y, (1,) * (2 - y.ndim) + y.shape)
        if not rowvar and y2.shape[0] != 1:
            y2 = lax.transpose(y2, (1, 0))
        X = lax.concatenate([X, y2], 0)
    if X.shape[1] == 0:
        shape = () if X.shape[0] == 1 else (X.shape[0], X.shape[0])
        return lax.full(shape, np.nan, X.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        fweights = ensure_arraylike("cov", fweights)
        if fweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fweights.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.issubdtype(fweights.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = ufuncs.abs(fweights)
    if aweights is not None:
        aweights = ensure_arraylike("cov", aweights)
        if aweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aweights.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = ufuncs.abs(aweights)
        w = aweights if w is None else ufuncs.multiply(w, aweights)
    if dtype is not None:
        X = lax.convert_element_type(X, dtype)
        w = lax.convert_element_type(w, dtype) if w is not None else w
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f: Any = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = ufuncs.subtract(w_sum, ddof)
    else:
        f = ufuncs.subtract(w_sum, ufuncs.true_divide(
            ufuncs.multiply(ddof, reductions.sum(ufuncs.multiply(w, aweights))), w_sum))
    X = ufuncs.subtract(X, lax.broadcast_in_dim(avg, X.shape, (0,)))
    X_T = lax.transpose(X if w is None else ufuncs.multiply(X, w), (1, 0))
    out = ufuncs.true_divide(dot(X, ufuncs.conj(X_T)), f)
    return lax.reshape(out, tuple(s for s in out.shape if s != 1))


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True,
             dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.corrcoef``: cov normalized by the standard deviations and
    clipped to [-1, 1] (real and imaginary parts separately)."""
    promotion.check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got {dtype=}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ufuncs.divide(c, c)
    n = c.shape[0]
    d = lax.reshape(lax.slice(lax.reshape(c, (n * n,)), (0,), (n * n,), (n + 1,)), (n,))
    stddev = lax.convert_element_type(ufuncs.sqrt(ufuncs.real(d)), c.dtype)
    c = ufuncs.true_divide(ufuncs.true_divide(c, lax.broadcast_in_dim(stddev, c.shape, (0,))),
                           lax.broadcast_in_dim(stddev, c.shape, (1,)))
    real_part = ufuncs.clip(ufuncs.real(c), -1, 1)
    if dtypes.issubdtype(c.dtype, np.complexfloating):
        return lax.complex(real_part, ufuncs.clip(ufuncs.imag(c), -1, 1))
    return real_part
