"""The QR factorizations of ``jax.lax.linalg``: the LAPACK-level primitives ``geqrf``
(Householder QR), ``geqp3`` (column-pivoted) and ``householder_product`` (orgqr / ungqr),
each one C++ op, and ``qr``, a primitive defined by their composition (as JAX's
``_qr_lowering``) with JAX's derivative rule."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla._src.core import ShapedArray
from tinyxla._src.interpreters import ad
from tinyxla._src.lax.lax import (
    _FLOAT_COMPLEX, _check_naryop_dtypes, add, concatenate, convert_element_type, full, imag,
    mul, sub)
from tinyxla._src.lax.linalg_matrices import H, eye_like, is_complex, matmul, mT, tril, triu
from tinyxla._src.lax.linalg_primitive import (
    composite_linalg_primitive, linalg_primitive, no_attrs, not_differentiable, split_batch)
from tinyxla._src.lax.linalg_solve import (
    _pad_last2, _slice_last2, lu, lu_solve, permute_rows, triangular_solve)


def _geqrf_abstract_eval(a: Any) -> list[ShapedArray]:
    batch, ((m, n),) = split_batch("geqrf", (2,), (a,))
    _check_naryop_dtypes("geqrf", [_FLOAT_COMPLEX], [a])
    return [ShapedArray(tuple(a.shape), a.dtype), ShapedArray((*batch, min(m, n)), a.dtype)]


geqrf_p = linalg_primitive("geqrf", _geqrf_abstract_eval, no_attrs, multiple_results=True)
not_differentiable(geqrf_p)


def geqrf(a: Any) -> tuple[Any, Any]:
    """``jax.lax.linalg.geqrf``: ``(a, taus)``, R in the upper triangle of ``a`` and Q as
    Householder reflectors below it and in ``taus``."""
    a_out, taus = geqrf_p.bind(a)
    return a_out, taus


def _geqp3_abstract_eval(a: Any, jpvt: Any, *, use_magma: Any) -> list[ShapedArray]:
    batch, ((m, n), _) = split_batch("geqp3", (2, 1), (a, jpvt))
    _check_naryop_dtypes("geqp3", [_FLOAT_COMPLEX], [a])
    if np.dtype(jpvt.dtype) != np.int32:
        raise TypeError(f"geqp3 requires int32 jpvt, got {np.dtype(jpvt.dtype).name}")
    return [ShapedArray(tuple(a.shape), a.dtype), ShapedArray(tuple(jpvt.shape), jpvt.dtype),
            ShapedArray((*batch, min(m, n)), a.dtype)]


geqp3_p = linalg_primitive("geqp3", _geqp3_abstract_eval, no_attrs, multiple_results=True)
not_differentiable(geqp3_p)


def geqp3(a: Any, jpvt: Any, *, use_magma: bool | None = None) -> tuple[Any, Any, Any]:
    """``jax.lax.linalg.geqp3``: ``(a, jpvt, taus)``, the column-pivoted QR with LAPACK's
    1-based ``jpvt`` (``a[:, jpvt - 1] = q @ r``). ``use_magma`` is GPU-only in JAX."""
    a_out, jpvt_out, taus = geqp3_p.bind(a, jpvt, use_magma=use_magma)
    return a_out, jpvt_out, taus


def _householder_product_abstract_eval(a: Any, taus: Any) -> ShapedArray:
    _, ((m, n), (k,)) = split_batch("householder_product", (2, 1), (a, taus))
    _check_naryop_dtypes("householder_product", [_FLOAT_COMPLEX] * 2, [a, taus])
    if m < n:
        raise ValueError("The first argument to householder_product must have at least as "
                         f"many rows as columns, got shape {(m, n)}")
    if k > min(m, n):
        raise ValueError("The second argument to householder_product must not have more "
                         "rows than the minimum of the first argument's rows and columns.")
    return ShapedArray(tuple(a.shape), a.dtype)


householder_product_p = linalg_primitive(
    "householder_product", _householder_product_abstract_eval, no_attrs,
    multiple_results=False)
not_differentiable(householder_product_p)


def householder_product(a: Any, taus: Any) -> Any:
    """``jax.lax.linalg.householder_product``: the first n columns of the product of the
    Householder reflectors in ``a`` [..., m, n] (below its diagonal) and ``taus``."""
    return householder_product_p.bind(a, taus)


# ---- qr ----

def _qr_abstract_eval(x: Any, *, pivoting: bool, full_matrices: bool,
                      use_magma: Any) -> list[ShapedArray]:
    batch, ((m, n),) = split_batch("qr", (2,), (x,))
    _check_naryop_dtypes("qr", [_FLOAT_COMPLEX], [x])
    k = m if full_matrices else min(m, n)
    out = [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]
    if pivoting:
        out.append(ShapedArray((*batch, n), np.dtype(np.int32)))
    return out


def _qr_composition(a: Any, *, pivoting: bool, full_matrices: bool,
                    use_magma: Any) -> list[Any]:
    """JAX's ``_qr_lowering``: geqrf (or geqp3), then householder_product."""
    *batch, m, n = a.shape
    batch = tuple(batch)
    if m == 0 or n == 0:
        k = m if full_matrices else min(m, n)
        eye = eye_like(full(batch + (m, k), 0, a.dtype))
        out = [eye, full(batch + (k, n), 0, a.dtype)]
        if pivoting:
            out.append(full(batch + (n,), 0, np.int32))
        return out
    p = None
    if pivoting:
        r, p, taus = geqp3(a, full(batch + (n,), 0, np.int32), use_magma=use_magma)
        p = sub(p, full(p.shape, 1, np.int32))
    else:
        r, taus = geqrf(a)
    if m < n:
        q = householder_product(_slice_last2(r, (0, m), (0, m)), taus)
    elif full_matrices:
        q = householder_product(_pad_last2(r, (0, 0), (0, m - n)), taus)
    else:
        q = householder_product(r, taus)
        r = _slice_last2(r, (0, n), (0, n))
    r = triu(r)
    return [q, r] if p is None else [q, r, p]


qr_p = composite_linalg_primitive("qr", _qr_abstract_eval, _qr_composition,
                                  multiple_results=True)


def _thin_qr_jvp(q: Any, r: Any, dx: Any) -> tuple[Any, Any]:
    """JVP of the QR of [..., m, n] matrices with m >= n (JAX's rule)."""
    dx_rinv = triangular_solve(r, dx)  # right-side solve
    qt_dx_rinv = matmul(H(q), dx_rinv)
    qt_dx_rinv_lower = tril(qt_dx_rinv, -1)
    do = sub(qt_dx_rinv_lower, H(qt_dx_rinv_lower))  # skew-symmetric
    if is_complex(qt_dx_rinv):
        # The imaginary part of the diagonal, which the real-diagonal R fixes.
        im_diag = mul(eye_like(do), convert_element_type(imag(qt_dx_rinv), do.dtype))
        do = add(do, mul(im_diag, convert_element_type(np.complex64(1j), do.dtype)))
    dq = add(matmul(q, sub(do, qt_dx_rinv)), dx_rinv)
    dr = matmul(sub(qt_dx_rinv, do), r)
    return dq, dr


def _qr_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, pivoting: bool,
            full_matrices: bool, use_magma: Any) -> tuple[list[Any], list[Any]]:
    """JAX's ``qr_jvp_rule``: the thin rule, with the wide case split as ``[X1 X2]`` and
    the tall full case completed as in arXiv:2409.13374."""
    (x,), (dx,) = primals, tangents
    outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    q, r, *p = outs
    dx = ad.instantiate_zeros(dx)
    *_, m, n = x.shape
    if pivoting:
        dx = _permute_columns(dx, p[0])
    if m < n:
        x2 = _slice_last2(x, (0, m), (m, n))
        dx1 = _slice_last2(dx, (0, m), (0, m))
        dx2 = _slice_last2(dx, (0, m), (m, n))
        dq, dr1 = _thin_qr_jvp(q, _slice_last2(r, (0, m), (0, m)), dx1)
        dr2 = add(matmul(H(dq), x2), matmul(H(q), dx2))
        dr = concatenate([dr1, dr2], len(dr1.shape) - 1)
    else:
        q_mn = _slice_last2(q, (0, m), (0, n)) if full_matrices else q
        r_nn = _slice_last2(r, (0, n), (0, n)) if full_matrices else r
        dq, dr = _thin_qr_jvp(q_mn, r_nn, dx)
        if full_matrices and m != n:
            q_nn = _slice_last2(q_mn, (0, n), (0, n))
            q_pn = _slice_last2(q_mn, (n, m), (0, n))
            q_mp = _slice_last2(q, (0, m), (n, m))
            dq_nn = _slice_last2(dq, (0, n), (0, n))
            dq_pn = _slice_last2(dq, (n, m), (0, n))
            lu_, _, perm = lu(sub(q_nn, eye_like(q_nn)))
            z_pn_h = lu_solve(lu_, perm, H(q_pn), trans=2)
            z_pn = H(z_pn_h)
            dq_mp = sub(matmul(dq, z_pn_h),
                        matmul(add(q_mn, matmul(q_mp, z_pn)),
                               H(sub(dq_pn, matmul(z_pn, dq_nn)))))
            dq = concatenate([dq, dq_mp], len(dq.shape) - 1)
            zeros = full((*dr.shape[:-2], m - n, n), 0, dr.dtype)
            dr = concatenate([dr, zeros], len(dr.shape) - 2)
    tangents_out = [dq, dr]
    if pivoting:
        tangents_out.append(ad.Zero.from_primal_value(p[0]))
    return list(outs), tangents_out


def _permute_columns(x: Any, p: Any) -> Any:
    """``x[..., p]`` for a permutation ``p`` [..., n]."""
    return mT(permute_rows(mT(x), p))


ad.primitive_jvps[qr_p] = _qr_jvp


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Any, ...]:
    """``jax.lax.linalg.qr``: ``(q, r)`` (and the int32 column permutation ``p`` with
    ``x[..., p] = q @ r`` when ``pivoting``) of each matrix of ``x`` [..., m, n];
    ``full_matrices`` makes q [m, m], otherwise [m, min(m, n)]."""
    return tuple(qr_p.bind(x, pivoting=bool(pivoting), full_matrices=bool(full_matrices),
                           use_magma=use_magma))
