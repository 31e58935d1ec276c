"""The condensed forms of ``jax.lax.linalg``: ``schur`` (LAPACK gees), ``hessenberg``
(gehrd) and ``tridiagonal`` (sytrd / hetrd), each one C++ op over batches of square
matrices. As in JAX they have no derivative rules."""
from __future__ import annotations

from typing import Any, Callable

from tinyxla._src.core import ShapedArray
from tinyxla._src.lax.lax import _FLOAT_COMPLEX, _check_naryop_dtypes
from tinyxla._src.lax.linalg_matrices import real_dtype
from tinyxla._src.lax.linalg_primitive import (
    linalg_primitive, no_attrs, not_differentiable, split_batch)


def _schur_abstract_eval(x: Any, *, compute_schur_vectors: bool, sort_eig_vals: bool,
                         select_callable: Any) -> list[ShapedArray]:
    _, ((m, n),) = split_batch("schur", (2,), (x,))
    _check_naryop_dtypes("schur", [_FLOAT_COMPLEX], [x])
    if m != n:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {(m, n)}.")
    aval = ShapedArray(tuple(x.shape), x.dtype)
    return [aval, aval] if compute_schur_vectors else [aval]


def _schur_attrs(*, compute_schur_vectors: bool, sort_eig_vals: bool,
                 select_callable: Any) -> dict[str, Any]:
    if sort_eig_vals:
        raise NotImplementedError(
            "The sort feature of LAPACK's gees routine is not implemented.")
    return {"compute_vectors": bool(compute_schur_vectors)}


schur_p = linalg_primitive("schur", _schur_abstract_eval, _schur_attrs, multiple_results=True)
not_differentiable(schur_p)


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Callable[..., Any] | None = None) -> tuple[Any, ...]:
    """``jax.lax.linalg.schur``: ``(t, vs)`` with ``x = vs t vs^H``, t upper triangular
    (quasi-triangular with 2x2 blocks for real x), or ``(t,)`` without vectors. A matrix
    LAPACK cannot decompose gets NaN. ``sort_eig_vals`` raises NotImplementedError, as in
    JAX."""
    _schur_attrs(compute_schur_vectors=compute_schur_vectors, sort_eig_vals=sort_eig_vals,
                 select_callable=select_callable)
    return tuple(schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors),
                              sort_eig_vals=bool(sort_eig_vals),
                              select_callable=select_callable))


def _hessenberg_abstract_eval(a: Any) -> list[ShapedArray]:
    batch, ((m, n),) = split_batch("hessenberg", (2,), (a,))
    _check_naryop_dtypes("hessenberg", [_FLOAT_COMPLEX], [a])
    if m != n:
        raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {(m, n)}")
    return [ShapedArray(tuple(a.shape), a.dtype), ShapedArray((*batch, n - 1), a.dtype)]


hessenberg_p = linalg_primitive("hessenberg", _hessenberg_abstract_eval, no_attrs,
                                multiple_results=True)
not_differentiable(hessenberg_p)


def hessenberg(a: Any) -> tuple[Any, Any]:
    """``jax.lax.linalg.hessenberg``: ``(a, taus)``, the upper Hessenberg form on and above
    the first subdiagonal of ``a`` and the Householder reflectors below it, with their
    scalar factors ``taus``."""
    a_out, taus = hessenberg_p.bind(a)
    return a_out, taus


def _tridiagonal_abstract_eval(a: Any, *, lower: bool) -> list[ShapedArray]:
    batch, ((m, n),) = split_batch("tridiagonal", (2,), (a,))
    _check_naryop_dtypes("tridiagonal", [_FLOAT_COMPLEX], [a])
    if m != n or n == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                         f"{(m, n)}.")
    real = real_dtype(a.dtype)
    return [ShapedArray(tuple(a.shape), a.dtype), ShapedArray((*batch, n), real),
            ShapedArray((*batch, n - 1), real), ShapedArray((*batch, n - 1), a.dtype)]


tridiagonal_p = linalg_primitive("tridiagonal", _tridiagonal_abstract_eval,
                                 lambda lower: {"lower": bool(lower)}, multiple_results=True)
not_differentiable(tridiagonal_p)


def tridiagonal(a: Any, *, lower: bool = True) -> tuple[Any, Any, Any, Any]:
    """``jax.lax.linalg.tridiagonal``: ``(a, d, e, taus)``, the tridiagonal reduction of
    each Hermitian matrix of ``a`` read from its ``lower`` (or upper) triangle: ``d`` the
    diagonal, ``e`` the off-diagonal, the reflectors in ``a`` and ``taus``."""
    a_out, d, e, taus = tridiagonal_p.bind(a, lower=bool(lower))
    return a_out, d, e, taus
