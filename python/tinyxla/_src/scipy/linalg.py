"""``jax.scipy.linalg``'s factorizations and solves: ``cholesky``, ``cho_factor``,
``cho_solve``, ``lu``, ``lu_factor``, ``lu_solve``, ``solve`` (``assume_a``),
``solve_triangular``, ``inv``, ``det``, ``eigh``, ``svd``, ``qr``,
``schur``, ``hessenberg`` and ``polar``, over ``lax.linalg``'s primitives with
``jax.numpy.vectorize``'s broadcasting where JAX uses it. The scipy arguments that only
concern memory (``overwrite_*``, ``check_finite``, ``lwork``) are accepted and ignored, as
in JAX."""
from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.api import jit
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import linalg as lax_linalg
from tinyxla._src.lax import (
    linalg_condensed, linalg_qdwh, linalg_qr, linalg_solve, linalg_svd)
from tinyxla._src.numpy.promotion import promote_dtypes_inexact
from tinyxla._src.numpy.vectorize import vectorize


@functools.partial(jit, static_argnames=("lower",))
def _cholesky(a: Any, lower: bool) -> Any:
    a, = promote_dtypes_inexact(jnp.asarray(a))
    l = lax_linalg.cholesky(a if lower else jnp.conj(a.mT), symmetrize_input=False)
    return l if lower else jnp.conj(l.mT)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.cholesky``: the upper factor (``lower``: the lower one),
    reading only that triangle of ``a``; NaN where ``a`` is not positive definite."""
    return _cholesky(a, lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """Mirrors ``jax.scipy.linalg.cho_factor``: ``(c, lower)`` for ``cho_solve``."""
    return cholesky(a, lower=lower), lower


def _solve_signature(name: str, a: Any, b: Any, extra: str = "") -> str:
    """JAX's gufunc signature for a solve with right-hand side ``b``: one vector when b
    has one dim or (deprecated, with JAX's FutureWarning) looks like a batch of them."""
    vector = b.ndim == 1
    if not vector and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(
            f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and "
            "in the future will be treated as a batched 2D solve. Use "
            f"{name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
            category=FutureWarning)
        vector = True
    rhs = "(n)" if vector else "(n,k)"
    return f"(n,n){extra},{rhs}->{rhs}"


def _cho_solve_matrices(c: Any, b: Any, lower: bool) -> Any:
    """x with ``c c^H x = b`` (``lower``) or ``c^H c x = b``, for c [..., n, n] and b
    [..., n, k] of one batch."""
    b = linalg_solve.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                      conjugate_a=not lower)
    return linalg_solve.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower,
                                         conjugate_a=lower)


@functools.partial(jit, static_argnames=("lower",))
def _cho_solve(c: Any, b: Any, lower: bool) -> Any:
    c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
    signature = _solve_signature("cho_solve", c, b)

    def solve_one(c, b):
        vector = b.ndim == 1
        x = _cho_solve_matrices(c, b[:, None] if vector else b, lower)
        return x[:, 0] if vector else x
    return vectorize(solve_one, signature=signature)(c, b)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.cho_solve``: x with ``A x = b`` from ``cho_factor(A)``."""
    c, lower = c_and_lower
    return _cho_solve(c, b, lower)


@jit
def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """Mirrors ``jax.scipy.linalg.lu_factor``: ``(lu, pivots)`` (0-based int32 pivots)."""
    a, = promote_dtypes_inexact(jnp.asarray(a))
    lu_, pivots, _ = linalg_solve.lu(a)
    return lu_, pivots


@functools.partial(jit, static_argnames=("trans",))
def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.lu_solve``: x with ``A x = b`` (trans 0), ``A^T x = b``
    (1) or ``A^H x = b`` (2) from ``lu_factor(A)``."""
    lu_, pivots = lu_and_piv
    lu_, b = promote_dtypes_inexact(jnp.asarray(lu_), jnp.asarray(b))
    perm = linalg_solve.lu_pivots_to_permutation(pivots, lu_.shape[-2])
    signature = _solve_signature("lu_solve", lu_, b, extra=",(n)")

    def solve_one(lu_, perm, b):
        vector = b.ndim == 1
        x = linalg_solve.lu_solve(lu_, perm, b[:, None] if vector else b, trans=trans)
        return x[:, 0] if vector else x
    return vectorize(solve_one, signature=signature)(lu_, perm, b)


@functools.partial(jit, static_argnames=("permute_l",))
def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple[Any, ...]:
    """Mirrors ``jax.scipy.linalg.lu``: ``(p, l, u)`` with ``a = p @ l @ u`` (or
    ``(p @ l, u)`` with ``permute_l``) of one matrix."""
    a, = promote_dtypes_inexact(jnp.asarray(a))
    lu_, _, permutation = linalg_solve.lu(a)
    dtype = a.dtype
    m, n = np.shape(a)
    p = jnp.real(jnp.array(permutation[None, :] == jnp.arange(m, dtype=permutation.dtype)[:, None],
                           dtype=dtype))
    k = min(m, n)
    l = jnp.tril(lu_, -1)[:, :k] + jnp.eye(m, k, dtype=dtype)
    u = jnp.triu(lu_)[:k, :]
    if permute_l:
        return p @ l, u
    return p, l, u


@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _positive_definite_solve(a: Any, b: Any, lower: bool) -> Any:
    return _cho_solve_matrices(_cholesky(a, lower), b, lower)


@_positive_definite_solve.defjvp
def _positive_definite_solve_jvp(lower: bool, primals: Any, tangents: Any) -> tuple[Any, Any]:
    # The linear solve's rule (JAX's custom_linear_solve): dX = A^-1 (dB - dA X), with A's
    # one Cholesky factor.
    a, b = primals
    a_dot, b_dot = tangents
    c = _cholesky(a, lower)
    x = _cho_solve_matrices(c, b, lower)
    return x, _cho_solve_matrices(c, b_dot - a_dot @ x, lower)


@functools.partial(jit, static_argnames=("assume_a", "lower"))
def _solve(a: Any, b: Any, assume_a: str, lower: bool) -> Any:
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    if not (a.ndim >= 2 and b.ndim in (a.ndim, a.ndim - 1)
            and a.shape[-1] == a.shape[-2] == b.shape[a.ndim - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={a.shape} and b={b.shape}")
    vector = b.ndim == a.ndim - 1
    b_mat = b[..., None] if vector else b
    batch = jnp.broadcast_shapes(a.shape[:-2], b_mat.shape[:-2])
    x = _positive_definite_solve(jnp.broadcast_to(a, batch + a.shape[-2:]),
                                 jnp.broadcast_to(b_mat, batch + b_mat.shape[-2:]), lower)
    return x[..., 0] if vector else x


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """Mirrors ``jax.scipy.linalg.solve``: ``jnp.linalg.solve`` for ``assume_a`` 'gen',
    'sym' and 'her'; a Cholesky solve reading the ``lower`` (or upper) triangle for
    'pos'."""
    valid_assume_a = ["gen", "sym", "her", "pos"]
    if assume_a not in valid_assume_a:
        raise ValueError(f"Expected assume_a to be one of {valid_assume_a}; got {assume_a!r}")
    return _solve(a, b, assume_a, lower)


@functools.partial(jit, static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a: Any, b: Any, trans: int | str, lower: bool,
                      unit_diagonal: bool) -> Any:
    if trans in (0, "N"):
        transpose_a, conjugate_a = False, False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    signature = _solve_signature("solve_triangular", a, b)
    return vectorize(functools.partial(linalg_solve.triangular_solve, left_side=True,
                                       lower=lower, transpose_a=transpose_a,
                                       conjugate_a=conjugate_a, unit_diagonal=unit_diagonal),
                     signature=signature)(a, b)


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.solve_triangular``: x with ``op(a) x = b`` for the
    ``lower`` (or upper) triangle of ``a``, ``op`` by ``trans`` (0/'N', 1/'T', 2/'C')."""
    return _solve_triangular(a, b, trans, lower, unit_diagonal)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.inv`` (``jnp.linalg.inv``)."""
    return jnp.linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.det`` (``jnp.linalg.det``)."""
    return jnp.linalg.det(a)


@functools.partial(jit, static_argnames=("lower", "eigvals_only", "eigvals", "type"))
def _eigh(a: Any, b: Any, lower: bool, eigvals_only: bool, eigvals: Any, type: int) -> Any:
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    a, = promote_dtypes_inexact(jnp.asarray(a))
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: None = None, type: int = 1, check_finite: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.eigh``: ``(w, v)`` (or ``w``) of Hermitian ``a``; only
    the standard problem (``b=None``, ``type=1``, all eigenvalues), as in JAX."""
    return _eigh(a, b, lower, eigvals_only, eigvals, type)


@functools.partial(jit, static_argnames=("full_matrices", "compute_uv"))
def _svd(a: Any, *, full_matrices: bool, compute_uv: bool) -> Any:
    a, = promote_dtypes_inexact(jnp.asarray(a))
    out = linalg_svd.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    if compute_uv:
        s, u, vh = out
        return u, s, vh
    return out


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """Mirrors ``jax.scipy.linalg.svd``: ``(u, s, vh)`` (or ``s``)."""
    return _svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


@functools.partial(jit, static_argnames=("mode", "pivoting"))
def _qr(a: Any, mode: str, pivoting: bool) -> tuple[Any, ...]:
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    a, = promote_dtypes_inexact(jnp.asarray(a))
    q, r, *p = linalg_qr.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, p[0]) if pivoting else (r,)
    return (q, r, p[0]) if pivoting else (q, r)


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Any, ...]:
    """Mirrors ``jax.scipy.linalg.qr``: ``(q, r)`` for modes 'full' and 'economic',
    ``(r,)`` for 'r', with the column permutation last when ``pivoting``."""
    return _qr(a, mode, pivoting)


@functools.partial(jit, static_argnames=("output",))
def _schur(a: Any, output: str) -> tuple[Any, Any]:
    if output == "complex":
        a = a.astype(dtypes.to_complex_dtype(a.dtype))
    return linalg_condensed.schur(a)


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """Mirrors ``jax.scipy.linalg.schur``: ``(t, z)`` with ``a = z t z^H``; 'real' keeps
    real input real (2x2 blocks for complex pairs), 'complex' makes t triangular."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    return _schur(jnp.asarray(a), output)


@functools.partial(jit, static_argnames=("calc_q",))
def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.hessenberg``: the upper Hessenberg ``h`` (and ``q``
    with ``a = q h q^H`` when ``calc_q``)."""
    n = np.shape(a)[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    a_out, taus = linalg_condensed.hessenberg(a)
    h = jnp.triu(a_out, -1)
    if not calc_q:
        return h
    q = linalg_qr.householder_product(a_out[..., 1:, :-1], taus)
    batch = a_out.shape[:-2]
    q = jnp.block([[jnp.ones(batch + (1, 1), dtype=a_out.dtype),
                    jnp.zeros(batch + (1, n - 1), dtype=a_out.dtype)],
                   [jnp.zeros(batch + (n - 1, 1), dtype=a_out.dtype), q]])
    return h, q


def _polar_2d(a: Any, side: str, method: str, eps: float | None) -> tuple[Any, Any]:
    m, n = a.shape
    if method == "qdwh":
        # As JAX: qdwh of a (right) or of a^H (left); max_iterations is not passed on.
        if m >= n and side == "right":
            unitary, posdef, _, _ = linalg_qdwh.qdwh(a, is_hermitian=False, eps=eps)
        elif m < n and side == "left":
            unitary, posdef, _, _ = linalg_qdwh.qdwh(a.T.conj(), is_hermitian=False, eps=eps)
            unitary, posdef = unitary.T.conj(), posdef.T.conj()
        else:
            raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n "
                                      "where side='right' and m >= n side='left', got "
                                      f"{a.shape} with {side=}")
        return unitary, posdef
    if method != "svd":
        raise ValueError(f"Unknown polar decomposition method {method}.")
    s_svd, u_svd, vh_svd = linalg_svd.svd(a, full_matrices=False)
    s_svd = s_svd.astype(u_svd.dtype)
    unitary = u_svd @ vh_svd
    if side == "right":
        posdef = (vh_svd.T.conj() * s_svd[None, :]) @ vh_svd
    else:
        posdef = (u_svd * s_svd[None, :]) @ u_svd.T.conj()
    return unitary, posdef


@functools.partial(jit, static_argnames=("side", "method"))
def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """Mirrors ``jax.scipy.linalg.polar``: ``(u, p)`` with ``a = u p`` (side 'right') or
    ``a = p u`` ('left'), by QDWH iterations (``lax.linalg.qdwh``, tall right or wide left
    matrices only, as JAX) or from the SVD."""
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return vectorize(functools.partial(_polar_2d, side=side, method=method, eps=eps),
                     signature=sig)(arr)
