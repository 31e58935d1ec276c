"""``jax.scipy.linalg.eigh_tridiagonal``: the eigenvalues (and eigenvectors) of a Hermitian
tridiagonal matrix by bisection and inverse iteration, JAX's method, run by LAPACK
(stebz, stein) in the ``eigh_tridiagonal`` primitive."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src import random
from tinyxla._src.api import jit
from tinyxla._src.lax import linalg_eigh_tridiagonal

_SUPPORTED = (np.float32, np.float64, np.complex64, np.complex128)


def _target_indices(n: int, select: str, select_range: Any) -> np.ndarray:
    """The indices of the wanted eigenvalues, as JAX's ``target_counts``."""
    if select == "a":
        return np.arange(n, dtype=np.int32)
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        return np.arange(select_range[0], select_range[1] + 1).astype(np.int32)
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")


def _bracket(alpha: Any, beta_abs: Any) -> tuple[Any, Any]:
    """JAX's starting interval of the bisection: the Gershgorin bounds of the spectrum
    widened by a little more than rounding. JAX's bisection ends at its ends for wanted
    indices below 0 or above n - 1."""
    n = alpha.shape[0]
    finfo = np.finfo(alpha.dtype)
    row_sum = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    est_max = jnp.max(alpha + row_sum)
    est_min = jnp.min(alpha - row_sum)
    t_norm = jnp.maximum(jnp.abs(est_min), jnp.abs(est_max))
    one = np.ones([], alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.max(jnp.square(beta_abs)))
    fudge = 2.1
    slack = n * fudge * finfo.eps * t_norm
    return est_min - slack - 2 * fudge * pivmin, est_max + slack + fudge * pivmin


def _unit(x: Any) -> Any:
    """``x / |x|``, and 1 where ``x`` is 0."""
    size = jnp.abs(x)
    return jnp.where(size == 0, jnp.ones_like(x), x / jnp.where(size == 0, 1, size))


def _phases(beta: Any) -> Any:
    """``p`` with ``T = P^H R P``, ``P = diag(p)``, for the Hermitian tridiagonal ``T`` of
    off-diagonal ``beta`` (``T[i, i+1] = beta[i]``) and the real one ``R`` of ``|beta|``."""
    return jnp.concatenate([jnp.ones((1,), beta.dtype), jnp.cumprod(_unit(beta))])


def _as_jax_signs(v: Any, key: Any, k: int, first: int) -> Any:
    """The unit eigenvectors (columns of ``v``, the wanted ones from the ``first``) in the
    signs (phases) JAX's inverse iteration gives them: it starts from
    ``random.normal(key, (k, n))`` and converges to each start vector's projection on the
    eigenvector."""
    n, count = v.shape
    start = random.normal(key, (k, n), dtype=np.finfo(v.dtype).dtype)[first:first + count]
    return v * _unit(jnp.sum(jnp.conj(v) * start.T.astype(v.dtype), axis=0))


@functools.partial(jit, static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Any = None) -> Any:
    """Mirrors ``jax.scipy.linalg.eigh_tridiagonal``: the ascending eigenvalues (and, unless
    ``eigvals_only``, the unit eigenvectors as columns) of the Hermitian tridiagonal matrix
    of diagonal ``d`` [n] and off-diagonal ``e`` [n-1] (``T[i, i+1] = e[i]``), all of them
    (``select='a'``) or those of the indices ``select_range`` (``select='i'``), bisected to
    the absolute tolerance ``max(tol, eps |T|)``.

    Differs from JAX: LAPACK's bisection and inverse iteration (stebz, stein) rather than a
    ``while_loop``, so values agree to the tolerance, not bit for bit; each eigenvector's sign
    (phase) makes its overlap with JAX's start vector ``random.normal(key, (k, n))[j]``
    positive (``key`` defaults to ``random.key(42)`` as in JAX), the limit of exact inverse
    iteration; JAX's own signs also flip with the rounding of its shifts (an odd number of
    steps past the eigenvalue), so some columns differ from JAX's by a sign (a phase); eigenvectors of wanted indices outside ``0..n-1`` are NaN
    (JAX's eigenvalues there, the ends of its bisection bracket, are kept); derivatives are
    exact (JAX differentiates its bisection bracket forward and has no reverse mode)."""
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in _SUPPORTED or beta.dtype not in _SUPPORTED:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        "jax.scipy.linalg.eigh_tridiagonal, got "
                        f"{alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        return jnp.real(alpha) if eigvals_only else (jnp.real(alpha),
                                                     jnp.eye(n, dtype=alpha.dtype))
    is_complex = dtypes.issubdtype(alpha.dtype, np.complexfloating)
    real_alpha = jnp.real(alpha) if is_complex else alpha
    beta_abs = jnp.abs(beta)
    lower, upper = _bracket(real_alpha, beta_abs)
    targets = _target_indices(n, select, select_range)
    below, above = int(np.sum(targets < 0)), int(np.sum(targets >= n))
    wanted = targets[below:len(targets) - above]
    first, last = (int(wanted[0]), int(wanted[-1])) if len(wanted) else (0, -1)
    tol_value = jnp.zeros((), real_alpha.dtype) if tol is None else \
        jnp.asarray(tol, real_alpha.dtype)
    # A Hermitian T is P^H R P for the real R of off-diagonal |beta| (_phases).
    inside = linalg_eigh_tridiagonal.eigh_tridiagonal(
        real_alpha, beta_abs if is_complex else beta, tol_value, compute_vectors=not eigvals_only,
        lower_index=first, upper_index=last)
    w = jnp.concatenate([jnp.broadcast_to(lower, (below,)), inside[0],
                         jnp.broadcast_to(upper, (above,))])
    if eigvals_only:
        return w
    v = inside[1].astype(alpha.dtype)
    if is_complex:
        v = jnp.conj(_phases(beta))[:, None] * v
    v = _as_jax_signs(v, random.key(42) if key is None else key, len(targets), below)
    nan_columns = lambda count: jnp.full((n, count), np.nan, alpha.dtype)
    return w, jnp.concatenate([nan_columns(below), v, nan_columns(above)], axis=1)
