"""``jax.scipy.linalg``'s matrix functions: ``expm`` (scaling and squaring with JAX's
Padé approximants and thresholds), ``expm_frechet`` (its JVP), ``sqrtm`` and ``funm``
(through the complex Schur form, by the Parlett recurrence) and ``rsf2csf`` (real to
complex Schur form). Their data-dependent steps run in ``lax`` control flow as JAX's do:
expm's squarings in a ``scan`` of ``cond``s, sqrtm's and funm's recurrences one
superdiagonal per ``fori_loop`` trip (JAX's loops go element by element), so a trace does
not grow with the matrix; the Padé degree is a ``where`` selection."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from tinyxla import lax
from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.api import jit
from tinyxla._src.autodiff import jvp
from tinyxla._src.numpy.promotion import promote_dtypes_inexact
from tinyxla._src.numpy.vectorize import vectorize
from tinyxla._src.scipy.linalg import schur, solve_triangular

_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}


def _pade(a: Any, order: int) -> tuple[Any, Any]:
    """The odd (U) and even (V) parts of the degree-``order`` Padé approximant of exp."""
    b = _PADE[order]
    ident = jnp.eye(*a.shape, dtype=a.dtype)
    a2 = a @ a
    if order == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
                 + b[3] * a2 + b[1] * ident)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * ident
        return u, v
    powers = [ident, a2]
    while len(powers) <= order // 2:
        powers.append(powers[-1] @ a2 if len(powers) != 2 else a2 @ a2)
    terms = list(enumerate(powers[:order // 2 + 1]))[::-1]  # JAX's order of the sums
    odd = functools.reduce(lambda acc, t: acc + t, [b[2 * i + 1] * p for i, p in terms])
    even = functools.reduce(lambda acc, t: acc + t, [b[2 * i] * p for i, p in terms])
    return a @ odd, even


def _calc_p_q(a: Any) -> tuple[Any, Any, Any]:
    a_l1 = jnp.linalg.norm(a, 1)
    if a.dtype in (np.float64, np.complex128):
        maxnorm = 5.371920351148152
        conds = [1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                 2.097847961257068e+000]
        orders = (3, 5, 7, 9, 13)
    elif a.dtype in (np.float32, np.complex64):
        maxnorm = 3.925724783138660
        conds = [4.258730016922831e-001, 1.880152677804762e+000]
        orders = (3, 5, 7)
    else:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(a_l1 / maxnorm)))
    a = a / (2 ** n_squarings).astype(a.dtype)
    idx = jnp.digitize(a_l1, jnp.array(conds, dtype=a_l1.dtype))
    u, v = _pade(a, orders[0])
    for i, order in enumerate(orders[1:], 1):
        ui, vi = _pade(a, order)
        u, v = jnp.where(idx == i, ui, u), jnp.where(idx == i, vi, v)
    return u + v, -u + v, n_squarings


def _expm_2d(a: Any, upper_triangular: bool, max_squarings: int) -> Any:
    p, q, n_squarings = _calc_p_q(a)
    r = solve_triangular(q, p) if upper_triangular else jnp.linalg.solve(q, p)

    def square(r: Any, i: Any) -> tuple[Any, None]:
        return lax.cond(i < n_squarings, lambda x: x @ x, lambda x: x, r), None
    r, _ = lax.scan(square, r, jnp.arange(max_squarings, dtype=n_squarings.dtype))
    return jnp.where(n_squarings > max_squarings, jnp.full_like(a, np.nan), r)


@functools.partial(jit, static_argnames=("upper_triangular", "max_squarings"))
def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """Mirrors ``jax.scipy.linalg.expm``: the matrix exponential of each square matrix of
    ``A``; NaN when more than ``max_squarings`` squarings would be needed."""
    A, = promote_dtypes_inexact(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape}.")
    return vectorize(functools.partial(_expm_2d, upper_triangular=upper_triangular,
                                       max_squarings=max_squarings),
                     signature="(n,n)->(n,n)")(A)


@functools.partial(jit, static_argnames=("method", "compute_expm"))
def expm_frechet(A: Any, E: Any, *, method: str | None = None, compute_expm: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.expm_frechet``: the Fréchet derivative of expm at ``A``
    in direction ``E`` (``(expm(A), L)`` with ``compute_expm``), by forward-mode
    differentiation of expm."""
    a, e = jnp.asarray(A), jnp.asarray(E)
    if a.ndim < 2 or a.shape[-2] != a.shape[1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError("expected A and E to be the same shape, got "
                         f"A.shape={a.shape} E.shape={e.shape}")
    expm_a, frechet = jvp(functools.partial(expm, upper_triangular=False, max_squarings=16),
                          (a,), (e,))
    return (expm_a, frechet) if compute_expm else frechet


def _superdiagonal_mask(n: int, p: Any) -> Any:
    """The entries (i, i + p) of an n x n matrix (p may be traced)."""
    return lax.broadcasted_iota(np.int32, (n, n), 1) - lax.broadcasted_iota(np.int32, (n, n), 0) == p


def _sqrtm_triu(t: Any) -> Any:
    """The upper triangular square root of upper triangular ``t``, one superdiagonal at a
    time: ``U_ij (U_ii + U_jj) = T_ij - sum_{i<k<j} U_ik U_kj``."""
    n = t.shape[-1]
    diag = jnp.sqrt(jnp.diagonal(t))

    def superdiagonal(p: Any, u: Any) -> Any:
        s = u @ u  # the sum over i < k < j while the p-th superdiagonal of u is zero
        value = jnp.where(t == s, 0.0, (t - s) / (diag[:, None] + diag[None, :]))
        return jnp.where(_superdiagonal_mask(n, p), value, u)
    return lax.fori_loop(1, n, superdiagonal, jnp.diag(diag))


@jit
def _sqrtm(a: Any) -> Any:
    t, z = schur(a, output="complex")
    return z @ _sqrtm_triu(t) @ jnp.conj(z.T)


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """Mirrors ``jax.scipy.linalg.sqrtm``: the principal square root (complex) through the
    complex Schur form."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


def _rsf2csf_2d(t: Any, z: Any) -> tuple[Any, Any]:
    dtype = dtypes.to_complex_dtype(jnp.result_type(t, z))
    t, z = t.astype(dtype), z.astype(dtype)
    eps = dtypes.finfo(t.dtype).eps
    n = t.shape[0]
    rows = jnp.arange(n)
    for m in range(n - 1, 0, -1):
        # A Givens rotation that zeroes t[m, m-1], where it is not already negligible.
        mu = jnp.linalg.eigvals(t[m - 1:m + 1, m - 1:m + 1]) - t[m, m]
        r = jnp.linalg.norm(jnp.array([mu[0], t[m, m - 1]])).astype(t.dtype)
        c = mu[0] / r
        s = t[m, m - 1] / r
        g = jnp.array([[c.conj(), s], [-s, c]], dtype=t.dtype)
        col_mask = rows >= m - 1
        t_rows = t[m - 1:m + 1]
        t_new = t.at[m - 1:m + 1].set(jnp.where(col_mask, g @ jnp.where(col_mask, t_rows, 0),
                                                t_rows))
        row_mask = rows[:, None] < m + 1
        t_cols = t_new[:, m - 1:m + 1]
        t_new = t_new.at[:, m - 1:m + 1].set(
            jnp.where(row_mask, jnp.where(row_mask, t_cols, 0) @ g.conj().T, t_cols))
        z_new = z.at[:, m - 1:m + 1].set(z[:, m - 1:m + 1] @ g.conj().T)
        rotate = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = jnp.where(rotate, t_new, t), jnp.where(rotate, z_new, z)
        t = t.at[m, m - 1].set(0.0)
    return t, z


@jit
def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Mirrors ``jax.scipy.linalg.rsf2csf``: the complex Schur form ``(T, Z)`` of a real
    one."""
    t, z = jnp.asarray(T), jnp.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


def _parlett(f: Any, t: Any) -> tuple[Any, Any]:
    """Golub and Van Loan's algorithm 11.1.1 one superdiagonal at a time: F from its
    diagonal and upper triangular t, with the smallest divisor met."""
    n = t.shape[0]
    minden = jnp.abs(t[0, 0])
    diag = jnp.diagonal(t)
    den = diag[None, :] - diag[:, None]  # T_jj - T_ii

    def superdiagonal(p: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        # With the p-th superdiagonal of f still zero, (t f - f t)_ij is
        # T_ij (F_jj - F_ii) + sum_{i<k<j} (T_ik F_kj - F_ik T_kj).
        f, minden = carry
        s = t @ f - f @ t
        mask = _superdiagonal_mask(n, p)
        f = jnp.where(mask, jnp.where(den != 0, s / den, s), f)
        return f, jnp.minimum(minden, jnp.min(jnp.where(mask, jnp.abs(den), np.inf)))
    return lax.fori_loop(1, n, superdiagonal, (f, minden))


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """Mirrors ``jax.scipy.linalg.funm``: ``func`` applied to a square matrix through its
    Schur form (complex result); with ``disp=False`` also JAX's error estimate."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(a)
    t, z = rsf2csf(t, z)
    f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
    f, minden = _parlett(f, t)
    f = z @ f @ z.conj().T
    if disp:
        return f
    tol = {"e": dtypes.finfo(np.float16).eps, "f": dtypes.finfo(np.float32).eps}.get(
        f.dtype.char.lower(), dtypes.finfo(np.float64).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf, jnp.minimum(1, jnp.maximum(
        tol, (tol / minden) * jnp.linalg.norm(jnp.triu(t, 1), 1))))
    return f, err

