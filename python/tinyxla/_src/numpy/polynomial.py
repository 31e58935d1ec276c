"""Polynomials as coefficient arrays (highest power first): poly, polyadd, polysub, polymul,
polydiv, polyder, polyint, polyval, polyfit, roots, vander, and trim_zeros.

Mirrors ``jax._src.numpy.polynomial``. Differences: ``polyval`` is an unrolled Horner
loop (JAX scans; the values agree); ``polyfit`` solves its least-squares problem by a
Householder QR of the column-scaled Vandermonde matrix (JAX calls an SVD ``lstsq``),
which agrees for full-rank problems and ignores ``rcond`` in the solution (``full=True``
reports the singular values, the rank counted with ``rcond``, as JAX does).
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.lax import sorting as lax_sorting
from tinyxla._src.numpy import linalg, promotion, reductions, ufuncs
from tinyxla._src.numpy.convolution import convolve
from tinyxla._src.numpy.indexing import take
from tinyxla._src.numpy.promotion import (
    concrete_or_error, ensure_arraylike, promote_dtypes, promote_dtypes_inexact)

ArrayLike = Any


def _atleast_1d(x: Any) -> Any:
    return lax.reshape(x, (1,)) if x.ndim == 0 else x


def trim_zeros(filt: ArrayLike, trim: str = "fb",
               axis: int | Sequence[int] | None = None) -> Any:
    """Mirrors ``jax.numpy.trim_zeros``: drops leading ('f') and trailing ('b') zero
    slices along ``axis`` (every axis by default); needs a concrete input."""
    filt = ensure_arraylike("trim_zeros", filt)
    concrete_or_error(None, filt, "Error arose in the `filt` argument of trim_zeros()")
    if axis is None:
        axes = set(range(filt.ndim))
    else:
        axes = {promotion.canonicalize_axis(a, filt.ndim)
                for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt
    nonzero = np.asarray(lax.ne(filt, lax.full_like(filt, 0)))
    starts, stops = [0] * filt.ndim, list(filt.shape)
    for ax in axes:
        mask = nonzero.any(axis=tuple(i for i in range(filt.ndim) if i != ax))
        if not mask.any():
            starts[ax], stops[ax] = 0, 0
            continue
        if "f" in trim:
            starts[ax] = int(mask.argmax())
        if "b" in trim:
            stops[ax] = filt.shape[ax] - int(mask[::-1].argmax())
    return lax.slice(filt, tuple(starts), tuple(stops))


def _trim_zeros_tol(filt: Any, tol: Any, trim: str = "fb") -> Any:
    small = np.asarray(lax.lt(ufuncs.abs(filt), tol))
    if small.all():
        return lax.full((0,), 0, filt.dtype)
    start = int(small.argmin()) if "f" in trim else 0
    end = int(small[::-1].argmin()) if "b" in trim else 0
    return lax.slice(filt, (start,), (filt.shape[0] - end,))


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Any:
    """Mirrors ``jax.numpy.vander``: columns are powers of x (decreasing by default)."""
    x = ensure_arraylike("vander", x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else concrete_or_error(operator.index, N,
                                                       "'N' argument of jnp.vander()")
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = lax.iota(x.dtype, N)
    if not increasing:
        powers = lax.sub(lax.full((N,), N - 1, x.dtype), powers)
    return ufuncs.power(lax.reshape(x, (x.shape[0], 1)), lax.reshape(powers, (1, N)))


def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Any:
    """Mirrors ``jax.numpy.polyval``: Horner's rule along p's first axis (``unroll`` has
    no effect: the loop is always unrolled)."""
    p, x = ensure_arraylike("polyval", p, x)
    p, x = promote_dtypes(p, x)
    shape = promotion.broadcast_shapes(p.shape[1:], x.shape)
    y = lax.full(shape, 0, x.dtype)
    for i in range(p.shape[0]):
        y = ufuncs.add(ufuncs.multiply(y, x), p[i])
    return y


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.polyadd``."""
    a1, a2 = ensure_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    if a2.shape[0] > a1.shape[0]:
        a1, a2 = a2, a1
    pad = a1.shape[0] - a2.shape[0]
    return ufuncs.add(a1, lax.pad(a2, lax.full((), 0, a2.dtype),
                                  [(pad, 0, 0)] + [(0, 0, 0)] * (a2.ndim - 1)))


def polysub(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.polysub``."""
    a1, a2 = ensure_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    return polyadd(a1, ufuncs.negative(a2))


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Any:
    """Mirrors ``jax.numpy.polymul``: the full convolution of the coefficients."""
    a1, a2 = ensure_arraylike("polymul", a1, a2)
    a1, a2 = promote_dtypes_inexact(a1, a2)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if a1.shape[0] == 0:
        a1 = lax.full((1,), 0, a2.dtype)
    if a2.shape[0] == 0:
        a2 = lax.full((1,), 0, a1.dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False
            ) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.polydiv``: (quotient, remainder) by long division; the
    remainder keeps u's length unless ``trim_leading_zeros``."""
    u, v = ensure_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = ufuncs.true_divide(1.0, v[0])
    q = [lax.full((), 0, u.dtype)] * max(m - n + 1, 1)
    for k in range(0, m - n + 1):
        d = ufuncs.multiply(scale, u[k])
        q[k] = d
        update = lax.pad(ufuncs.multiply(ufuncs.negative(d), v), lax.full((), 0, u.dtype),
                         [(k, m - n - k, 0)])
        u = ufuncs.add(u, update)
    quotient = lax.concatenate([lax.reshape(lax.convert_element_type(c, u.dtype), (1,))
                                for c in q], 0)
    if trim_leading_zeros:
        u = _trim_zeros_tol(u, ufuncs.sqrt(dtypes.finfo(u.dtype).eps), trim="f")
    return quotient, u


def polyder(p: ArrayLike, m: int = 1) -> Any:
    """Mirrors ``jax.numpy.polyder``: the m-th derivative."""
    p = ensure_arraylike("polyder", p)
    m = concrete_or_error(operator.index, m, "'m' argument of jnp.polyder")
    p, = promote_dtypes_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    keep = max(n - m, 0)
    # d^m/dx^m x^k = k (k-1) ... (k-m+1) x^(k-m), for the powers k = n-1 down to m.
    coeff = np.prod(np.arange(m, n)[None, :] - np.arange(m)[:, None], axis=0)[::-1]
    return ufuncs.multiply(lax.slice(p, (0,), (keep,)),
                           lax.convert_element_type(coeff.astype(np.float64), p.dtype))


def polyint(p: ArrayLike, m: int = 1, k: int | ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.polyint``: the m-th antiderivative with constants ``k``."""
    m = concrete_or_error(operator.index, m, "'m' argument of jnp.polyint")
    k = 0 if k is None else k
    p, k = ensure_arraylike("polyint", p, k)
    p, k = promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = _atleast_1d(k)
    if k.shape[0] == 1:
        k = lax.broadcast_in_dim(k[0], (m,), ())
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    n = p.shape[0]
    grid = np.arange(n + m)[None, :] - np.arange(m)[:, None]
    coeff = np.prod(np.maximum(1, grid), axis=0)[::-1].astype(np.float64)
    return ufuncs.true_divide(lax.concatenate([p, k], 0),
                              lax.convert_element_type(coeff, p.dtype))


def poly(seq_of_zeros: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.poly``: the monic polynomial with these roots (a square
    matrix gives its characteristic polynomial)."""
    z = ensure_arraylike("poly", seq_of_zeros)
    z, = promote_dtypes_inexact(z)
    z = _atleast_1d(z)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = linalg.eigvals(z)
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = z.dtype
    if z.shape[0] == 0:
        return lax.full((), 1, dt)
    a = lax.full((1,), 1, dt)
    for k in range(z.shape[0]):
        factor = lax.concatenate([lax.full((1,), 1, dt), lax.reshape(lax.neg(z[k]), (1,))], 0)
        a = convolve(a, factor, mode="full")
    return a


def _companion_roots(p: Any) -> Any:
    n = p.shape[0]
    if n < 2:
        return lax.full((0,), 0, dtypes.to_complex_dtype(p.dtype))
    first = lax.reshape(ufuncs.true_divide(ufuncs.negative(p[1:]), p[0]), (1, n - 1))
    below = lax.convert_element_type(np.eye(n - 2, n - 1), p.dtype)
    return linalg.eigvals(lax.concatenate([first, below], 0))


def roots(p: ArrayLike, *, strip_zeros: bool = True) -> Any:
    """Mirrors ``jax.numpy.roots``: eigenvalues of the companion matrix. With
    ``strip_zeros=False`` leading zeros give NaN roots (then p may be traced)."""
    p = ensure_arraylike("roots", p)
    p, = promote_dtypes_inexact(p)
    p = _atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = p.shape[0]
    if n < 2:
        return lax.full((0,), 0, dtypes.to_complex_dtype(p.dtype))
    is_zero = lax.eq(p, lax.full_like(p, 0))
    leading = lax.select(reductions.all(is_zero), lax.full((), n, np.int32),
                         lax.convert_element_type(reductions.argmin(is_zero), np.int32))
    if strip_zeros:
        k = concrete_or_error(int, leading,
                              "The error occurred in the jnp.roots() function. To use this "
                              "within a JIT-compiled context, pass strip_zeros=False, but be "
                              "aware that leading zeros will result in some returned roots "
                              "being set to NaN.")
        return _companion_roots(p[k:])
    # Roll the leading zeros to the end (an all-zero p becomes ones, as in JAX).
    p = lax.select(lax.broadcast_in_dim(lax.eq(leading, lax.full((), n, np.int32)), (n,), ()),
                   lax.full_like(p, 1), p)
    idx = lax.rem(lax.add(lax.iota(np.int32, n), lax.broadcast_in_dim(leading, (n,), ())),
                  lax.full((n,), n, np.int32))
    r = _companion_roots(take(p, idx))
    r = lax_sorting.sort_key_val(lax.eq(r, lax.full_like(r, 0)), r)[1]
    keep = lax.lt(lax.iota(np.int32, n - 1), lax.broadcast_in_dim(
        lax.sub(lax.full((), n - 1, np.int32), leading), (n - 1,), ()))
    return lax.select(keep, r, lax.full_like(r, complex(np.nan, np.nan)))


def _householder_qr(a: Any) -> tuple[Any, list[Any]]:
    """The (k, k) R of a real (n, k) matrix, n >= k, and the Householder vectors whose
    reflections (``_reflect``, in order) apply Q^T."""
    n, k = a.shape
    vs = []
    rows = lax.iota(np.int32, n)
    for j in range(k):
        col = lax.reshape(lax.slice(a, (0, j), (n, j + 1)), (n,))
        below = lax.ge(rows, lax.full((n,), j, np.int32))
        col = lax.select(below, col, lax.full_like(col, 0))
        norm = lax.sqrt(reductions.sum(lax.mul(col, col)))
        pivot = col[j]
        sign = lax.select(lax.ge(pivot, lax.full_like(pivot, 0)), lax.full_like(pivot, 1),
                          lax.full_like(pivot, -1))
        alpha = lax.neg(lax.mul(sign, norm))
        e = lax.convert_element_type(lax.eq(rows, lax.full((n,), j, np.int32)), a.dtype)
        v = lax.sub(col, lax.mul(lax.broadcast_in_dim(alpha, (n,), ()), e))
        vv = reductions.sum(lax.mul(v, v))
        safe = lax.select(lax.gt(vv, lax.full_like(vv, 0)), vv, lax.full_like(vv, 1))
        v = lax.div(v, lax.broadcast_in_dim(lax.sqrt(lax.div(safe, lax.full_like(safe, 2))),
                                            (n,), ()))
        vs.append(v)
        a = _reflect(a, v)
    return lax.slice(a, (0, 0), (k, k)), vs


def _reflect(b: Any, v: Any) -> Any:
    """(I - v v^T) b for v scaled so that v^T v = 2."""
    vt_b = lax.dot_general(v, b, (((0,), (0,)), ((), ())))
    update = lax.mul(lax.broadcast_in_dim(v, b.shape, (0,)),
                     lax.broadcast_in_dim(vt_b, b.shape, tuple(range(1, b.ndim))))
    return lax.sub(b, update)


def _back_substitute(r: Any, b: Any) -> Any:
    """Solves R x = b for upper-triangular (k, k) R; b is (k,) or (k, m)."""
    k = r.shape[0]
    xs: list[Any] = [None] * k
    for i in range(k - 1, -1, -1):
        acc = b[i]
        for j in range(i + 1, k):
            acc = ufuncs.subtract(acc, ufuncs.multiply(r[i, j], xs[j]))
        xs[i] = ufuncs.true_divide(acc, r[i, i])
    return lax.concatenate([lax.expand_dims(x, (0,)) for x in xs], 0)


def polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None,
            full: bool = False, w: ArrayLike | None = None, cov: bool | str = False) -> Any:
    """Mirrors ``jax.numpy.polyfit``: least-squares coefficients, highest power first."""
    if w is None:
        x, y = ensure_arraylike("polyfit", x, y)
    else:
        x, y, w = ensure_arraylike("polyfit", x, y, w)
    deg = concrete_or_error(int, deg, "deg must be int")
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(dtypes.finfo(dtypes.to_inexact_dtype(x.dtype)).eps)
    rcond = concrete_or_error(float, rcond, "rcond must be float")
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w, = promote_dtypes_inexact(w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = ufuncs.multiply(lhs, lax.reshape(w, (w.shape[0], 1)))
        rhs = ufuncs.multiply(rhs, lax.reshape(w, (w.shape[0],) + (1,) * (rhs.ndim - 1)))
    lhs, rhs = promote_dtypes_inexact(lhs, rhs)
    scale = ufuncs.sqrt(reductions.sum(ufuncs.multiply(lhs, lhs), axis=0))
    lhs = ufuncs.true_divide(lhs, lax.reshape(scale, (1, order)))
    n = lhs.shape[0]
    if n >= order:
        r, vs = _householder_qr(lhs)
        qtb = rhs
        for v in vs:
            qtb = _reflect(qtb, v)
        c = _back_substitute(r, qtb[:order])
        resid_part = qtb[order:]
    else:   # underdetermined: the minimum-norm solution from the normal equations
        gram = lax.dot_general(lhs, lhs, (((1,), (1,)), ((), ())))
        r, vs = _householder_qr(gram)
        qtb = rhs
        for v in vs:
            qtb = _reflect(qtb, v)
        c = lax.dot_general(lhs, _back_substitute(r, qtb), (((0,), (0,)), ((), ())))
        resid_part = None
    c = ufuncs.true_divide(c, lax.reshape(scale, (order,) + (1,) * (c.ndim - 1)))
    gram = lax.dot_general(lhs, lhs, (((0,), (0,)), ((), ())))
    s = ufuncs.sqrt(lax.max(lax.rev(linalg.eigvalsh(gram), (0,)), lax.full((order,), 0, lhs.dtype)))
    rank = reductions.sum(lax.gt(s, ufuncs.multiply(rcond, s[0])))
    if resid_part is not None and n > order:
        resids = reductions.sum(ufuncs.multiply(resid_part, resid_part), axis=0)
        resids = _atleast_1d(resids)
    else:
        resids = lax.full((0,), 0, lhs.dtype)
    if full:
        return c, resids, rank, s, promotion.ensure_array(rcond)
    if cov:
        r_inv = _back_substitute(r, lax.convert_element_type(np.eye(order), lhs.dtype)) \
            if n >= order else None
        if r_inv is None:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        vbase = lax.dot_general(r_inv, r_inv, (((1,), (1,)), ((), ())))
        vbase = ufuncs.true_divide(vbase, ufuncs.multiply(lax.reshape(scale, (order, 1)),
                                                          lax.reshape(scale, (1, order))))
        if cov == "unscaled":
            fac = lax.full((), 1, lhs.dtype)
        else:
            if x.shape[0] <= order:
                raise ValueError("the number of data points must exceed order"
                                 " to scale the covariance matrix")
            fac = ufuncs.true_divide(resids, x.shape[0] - order)
        fac = _atleast_1d(fac)
        if y.ndim == 1:
            return c, ufuncs.multiply(vbase, lax.reshape(fac, (1, fac.shape[0])))
        return c, ufuncs.multiply(lax.expand_dims(vbase, (2,)),
                                  lax.reshape(fac, (1, 1, fac.shape[0])))
    return c
