"""``jax.numpy.linalg``: the norms (matrix norms ``ord=2``, ``-2`` and ``'nuc'`` from
the singular values) and the eigendecompositions (``eig``, ``eigvals``, ``eigh``,
``eigvalsh``) over ``lax.linalg``'s primitives."""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.api import jit
from tinyxla._src.lax import lax
from tinyxla._src.lax import linalg as lax_linalg
from tinyxla._src.numpy import reductions, ufuncs
from tinyxla._src.numpy.linalg_decompositions import svd
from tinyxla._src.numpy.shape import expand_dims, moveaxis
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
    two (``None``/``'fro'``, ±1, ±inf, and ±2 and ``'nuc'`` from the singular values),
    and for ``axis=None, ord=None`` the 2-norm of all elements at any rank."""
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
        x = moveaxis(x, axis, (-2, -1))
        s = svd(x, compute_uv=False)
        if ord == 2:
            y = reductions.max(s, axis=-1, initial=0)
        elif ord == -2:
            y = reductions.min(s, axis=-1)
        else:
            y = reductions.sum(s, axis=-1)
        return expand_dims(y, axis) if keepdims else y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


class EigResult(NamedTuple):
    """``jax.numpy.linalg.EigResult``."""
    eigenvalues: Any
    eigenvectors: Any


class EighResult(NamedTuple):
    """``jax.numpy.linalg.EighResult``."""
    eigenvalues: Any
    eigenvectors: Any


def eig(a: Any) -> EigResult:
    """Mirrors ``jax.numpy.linalg.eig``: the (complex) eigenvalues and right eigenvectors
    (columns, unit 2-norm) of each matrix of ``a`` ``[..., n, n]``, in LAPACK's order.
    Not differentiable (as in JAX: eigenvector derivatives need
    ``lax.linalg.eig(..., enable_eigvec_derivs=True)``)."""
    a = ensure_arraylike("jnp.linalg.eig", a)
    a, = promote_dtypes_inexact(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@jit
def eigvals(a: Any) -> Any:
    """Mirrors ``jax.numpy.linalg.eigvals``: the complex eigenvalues of each matrix of
    ``a`` ``[..., n, n]``, in LAPACK's order."""
    a = ensure_arraylike("jnp.linalg.eigvals", a)
    a, = promote_dtypes_inexact(a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


def _uplo_lower(UPLO: str | None) -> bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")


@functools.partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Mirrors ``jax.numpy.linalg.eigh``: ascending real eigenvalues and eigenvectors
    (columns) of each Hermitian matrix of ``a``. With ``symmetrize_input`` (the default)
    ``(a + a^H) / 2`` is decomposed; otherwise only the ``UPLO`` triangle is read."""
    lower = _uplo_lower(UPLO)
    a = ensure_arraylike("jnp.linalg.eigh", a)
    a, = promote_dtypes_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@functools.partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """Mirrors ``jax.numpy.linalg.eigvalsh``: the ascending real eigenvalues of each
    Hermitian matrix of ``a``."""
    a = ensure_arraylike("jnp.linalg.eigvalsh", a)
    w, _ = eigh(a, UPLO=UPLO, symmetrize_input=symmetrize_input)
    return w
