"""``lax.linalg.qdwh``: the polar decomposition ``x = u h`` by the QR-based dynamically
weighted Halley iteration (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31(5),
2010), as ``jax._src.tpu.linalg.qdwh``: the weights of each step are fixed in advance from
the lower bound ``eps`` on the smallest singular value; early steps (large weights) use a
QR of ``[sqrt(c) u; I]``, later ones a Cholesky of ``c u^H u + I``; Halley steps then run in
a ``while_loop`` until the iterate stops moving, and a Newton-Schulz step refines it.
Composed of lax primitives, so it traces under jit, vmap and grad."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.api import jit
from tinyxla._src.lax import lax
from tinyxla._src.lax.control_flow import fori_loop, while_loop
from tinyxla._src.lax.linalg import cholesky
from tinyxla._src.lax.linalg_matrices import H, is_complex, matmul
from tinyxla._src.lax.linalg_qr import qr
from tinyxla._src.lax.linalg_solve import triangular_solve
from tinyxla._src.lax.slicing import (
    dynamic_index_in_dim, dynamic_slice_in_dim, dynamic_update_slice_in_dim)

# Weights above this use the QR form of a step, which stays accurate for ill-conditioned
# iterates; below it the cheaper Cholesky form (JAX's cut-off).
_CHOLESKY_CUTOFF = 100


def _eye(n: int, dtype: Any) -> Any:
    return lax.convert_element_type(
        lax.eq(lax.broadcasted_iota(np.int32, (n, n), 0),
               lax.broadcasted_iota(np.int32, (n, n), 1)), dtype)


def _mask(x: Any, dims: tuple[Any, ...], alternative: Any = 0) -> Any:
    """``x`` with the entries outside its true (dynamic) shape ``dims`` replaced."""
    mask = None
    for i, d in enumerate(dims):
        if d is not None:
            index = lax.broadcasted_iota(np.int32, x.shape, i)
            inside = lax.lt(index, lax.convert_element_type(d, np.int32))
            mask = inside if mask is None else lax.bitwise_and(mask, inside)
    if mask is None:
        return x
    alt = lax.full_like(x, alternative) if np.ndim(alternative) == 0 else alternative
    return lax.select(mask, x, alt)


def _abs_sum_max(x: Any, axis: int) -> Any:
    return lax.reduce_max(lax.reduce_sum(lax.abs(x), (axis,)), (0,))


def _frobenius(x: Any) -> Any:
    a = lax.abs(x)
    return lax.sqrt(lax.reduce_sum(lax.mul(a, a), (0, 1)))


def _conj(x: Any) -> Any:
    return lax.conj(x) if is_complex(x) else x


def _scale(x: Any, s: Any) -> Any:
    return lax.mul(lax.convert_element_type(s, x.dtype), x)


def _qr_step(u: Any, m: Any, n: Any, params: Any) -> Any:
    """One weighted step through the QR of ``[sqrt(c) u; I]`` (its true rows ``m``)."""
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    big_m, big_n = u.shape
    y = lax.pad(_scale(u, sqrt_c), lax._const(u, 0), [(0, big_n, 0), (0, 0, 0)])
    y = dynamic_update_slice_in_dim(y, _eye(big_n, u.dtype), m, 0)
    q, _ = qr(y, full_matrices=False)
    q1 = _mask(lax.slice(q, (0, 0), (big_m, big_n)), (m, n))
    q2 = H(_mask(dynamic_slice_in_dim(q, m, big_n, 0), (n, n)))
    return lax.add(_scale(u, e), _scale(matmul(q1, q2), a_minus_e_by_sqrt_c))


def _cholesky_step(u: Any, m: Any, n: Any, params: Any) -> Any:
    """One weighted step through the Cholesky factor of ``c u^H u + I``."""
    a_minus_e, c, e = params
    big_n = u.shape[1]
    eye = _eye(big_n, u.dtype)
    x = lax.add(_scale(matmul(H(u), u), c), eye)
    # The padding gets the identity, so that the factorization does not fail there.
    y = cholesky(_mask(x, (n, n), eye), symmetrize_input=False)
    z = _conj(triangular_solve(y, lax.transpose(u, (1, 0)), left_side=True, lower=True,
                                  conjugate_a=True))
    z = H(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                           conjugate_a=True))
    return lax.add(_scale(u, e), _scale(z, a_minus_e))


def _weights(eps: float, max_iterations: int) -> tuple[list, list]:
    """The (QR-form, Cholesky-form) parameters of the weighted steps, from the lower bound
    ``eps`` on the scaled smallest singular value, as JAX computes them."""
    tol_l = 10.0 * eps / 2.0
    l, k = eps, 0
    qr_coefs, chol_coefs = [], []
    while l + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_coefs.append((((a - e) / c ** (1 / 2)), c ** (1 / 2), e))
        else:
            chol_coefs.append((a - e, c, e))
    return qr_coefs, chol_coefs


def _qdwh(x: Any, m: Any, n: Any, max_iterations: int, eps: float | None) -> tuple:
    if eps is None:
        eps = float(dtypes.finfo(x.dtype).eps)
    real = dtypes.finfo(x.dtype).dtype
    one_norm, inf_norm = _abs_sum_max(x, 0), _abs_sum_max(x, 1)
    # alpha >= ||x||_2, so the scaled iterate has singular values in (0, 1].
    alpha_inverse = lax.mul(lax.rsqrt(one_norm), lax.rsqrt(inf_norm))
    alpha_inverse = lax.select(lax.eq(one_norm, lax._const(one_norm, 0)),
                               lax.full_like(alpha_inverse, 1), alpha_inverse)
    u = _scale(x, alpha_inverse)
    tol_norm = np.asarray(np.cbrt(np.asarray(10.0 * eps / 2.0, real)), real)
    qr_coefs, chol_coefs = _weights(eps, max_iterations)

    def iterate(u: Any, coefs: list, step: Any, converging: bool) -> tuple[Any, Any]:
        if not coefs:
            return u, np.bool_(True)
        table = np.asarray(coefs, np.float32).astype(x.dtype)

        def body(k: Any, state: tuple) -> tuple:
            u_prev, _ = state
            params = [dynamic_index_in_dim(lax.asarray(table[:, j]), k, keepdims=False)
                      for j in range(3)]
            u = step(u_prev, m, n, params)
            moving = (lax.gt(_frobenius(lax.sub(u, u_prev)), tol_norm) if converging
                      else np.bool_(True))
            return u, lax.asarray(moving)
        return fori_loop(0, len(coefs), body, (u, lax.asarray(np.bool_(True))))

    u, _ = iterate(u, qr_coefs, _qr_step, False)
    u, not_converged = iterate(u, chol_coefs, _cholesky_step, True)

    # The weights have reached Halley's (a, b, c) = (3, 1, 3); iterate until u stops moving.
    halley = (3.0 - 1.0 / 3.0, 3.0, 1.0 / 3.0)

    def cond(state: tuple) -> Any:
        k, _, moving = state
        return lax.bitwise_and(moving, lax.lt(k, lax._const(k, max_iterations)))

    def body(state: tuple) -> tuple:
        k, u_prev, _ = state
        u = _cholesky_step(u_prev, m, n, halley)
        return lax.add(k, lax._const(k, 1)), u, lax.gt(_frobenius(lax.sub(u, u_prev)), tol_norm)

    num_iters, u, not_converged = while_loop(
        cond, body, (len(qr_coefs) + len(chol_coefs), u, lax.asarray(not_converged)))
    # A Newton-Schulz step: 1.5 u - 0.5 u (u^H u).
    u = lax.sub(_scale(u, 1.5), _scale(matmul(u, matmul(H(u), u)), 0.5))
    h = matmul(H(u), x)
    h = _scale(lax.add(h, H(h)), 0.5)
    return u, h, num_iters, lax.bitwise_not(not_converged)


@functools.partial(jit, static_argnames=("is_hermitian", "max_iterations", "eps"))
def qdwh(x: Any, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None) -> tuple:
    """Mirrors ``jax.lax.linalg.qdwh``: ``(u, h, num_iters, is_converged)`` with
    ``x = u h`` (``u`` with orthonormal columns, ``h`` Hermitian positive semidefinite) of
    a full-rank ``M x N`` matrix, ``M >= N``; ``dynamic_shape`` gives the true ``(m, n)``
    of a zero-padded ``x``. ``is_hermitian`` is unused, as in JAX."""
    if max_iterations is None:
        max_iterations = 10
    big_m, big_n = x.shape
    if big_m < big_n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, (m, n))
    else:
        m, n = big_m, big_n
    return _qdwh(x, m, n, int(max_iterations), eps)
