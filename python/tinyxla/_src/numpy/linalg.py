"""``jax.numpy.linalg``: so far the norms that need no decomposition. Matrix norms
``ord=2``, ``-2`` and ``'nuc'`` need singular values and raise NotImplementedError until
an SVD exists."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.api import jit
from tinyxla._src.lax import lax
from tinyxla._src.numpy import reductions, ufuncs
from tinyxla._src.numpy.promotion import (
    canonicalize_axis, ensure_arraylike, promote_dtypes_inexact)


def _sum_abs_sq(x: Any, axis: Any, keepdims: bool) -> Any:
    return reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axis, keepdims=keepdims)


@functools.partial(jit, static_argnames=("axis", "keepdims", "ord"))
def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """Mirrors ``jax.numpy.linalg.vector_norm``: ``ord`` 2 (default), ±inf, 0 (count of
    nonzeros), 1, or any other number p as ``sum(|x|^p)^(1/p)``."""
    x = ensure_arraylike("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return ufuncs.sqrt(_sum_abs_sq(x, axis, keepdims))
    if ord == np.inf:
        return reductions.max(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.min(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return reductions.sum(x != 0, dtype=dtypes.finfo(x.dtype).dtype, axis=axis,
                              keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    abs_x = ufuncs.abs(x)
    # ord and its reciprocal rounded to the dtype, as JAX computes them.
    ord_arr = np.asarray(ord, abs_x.dtype)[()]
    ord_inv = np.asarray(1. / ord_arr, abs_x.dtype)[()]
    out = reductions.sum(abs_x ** lax._const(abs_x, ord_arr), axis=axis, keepdims=keepdims)
    return ufuncs.power(out, lax._const(abs_x, ord_inv))


@functools.partial(jit, static_argnames=("ord", "axis", "keepdims"))
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Mirrors ``jax.numpy.linalg.norm``: a vector norm over one axis, a matrix norm over
    two (``None``/``'fro'``, ±1, ±inf), and for ``axis=None, ord=None`` the 2-norm of all
    elements at any rank. Differs from JAX: matrix ``ord`` 2, -2 and ``'nuc'`` raise
    NotImplementedError (no SVD yet)."""
    x = ensure_arraylike("jnp.linalg.norm", x)
    x, = promote_dtypes_inexact(x)
    ndim = np.ndim(x)
    if axis is None:
        if ord is None:
            return ufuncs.sqrt(_sum_abs_sq(x, None, keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axis = (canonicalize_axis(axis, ndim),)

    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: {axis=}. Pass one axis to"
                         " compute a vector-norm, or two axes to compute a matrix-norm.")
    row_axis, col_axis = axis
    if ord is None or ord in ("f", "fro"):
        return ufuncs.sqrt(_sum_abs_sq(x, axis, keepdims))
    if ord in (1, -1):
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        col_sums = reductions.sum(ufuncs.abs(x), axis=row_axis, keepdims=keepdims)
        if ord == 1:
            return reductions.max(col_sums, axis=col_axis, keepdims=keepdims, initial=0)
        return reductions.min(col_sums, axis=col_axis, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        row_sums = reductions.sum(ufuncs.abs(x), axis=col_axis, keepdims=keepdims)
        if ord == np.inf:
            return reductions.max(row_sums, axis=row_axis, keepdims=keepdims, initial=0)
        return reductions.min(row_sums, axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        raise NotImplementedError(
            f"jnp.linalg.norm: matrix norm ord={ord!r} needs singular values; "
            "tinyxla has no SVD yet")
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")
