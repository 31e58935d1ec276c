"""``jax.scipy.special``'s gamma and beta family: gamma, gammasgn, loggamma, beta, betaln,
betainc, gammainc, gammaincc, factorial, comb, poch, multigammaln, polygamma, zeta and
bernoulli, over the lax primitives (``lgamma``, ``igamma``, ``betainc``, ``zeta``, ...)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.lax import special as lax_special
from tinyxla._src.numpy import creation, reductions, selection, shape, ufuncs
from tinyxla._src.numpy.promotion import promote_args_inexact


def _real_only(name: str, x: Any, message: str | None = None) -> None:
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(message or f"{name} does not support complex-valued inputs.")


def _concrete_int(x: Any, context: str) -> int:
    """``x`` as a Python int; a traced value raises JAX's ConcretizationTypeError."""
    if isinstance(x, core.Tracer):
        raise errors.ConcretizationTypeError(x, context)
    return operator.index(x)


def gammasgn(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.gammasgn``: the sign of Γ(x); NaN at the poles and NaN,
    -1 at -0.0 (as scipy)."""
    x, = promote_args_inexact("gammasgn", x)
    _real_only("gammasgn", x)
    floor_x = lax.floor(x)
    x_negative = x < 0
    is_nan = (x_negative & (x == floor_x)) | ufuncs.isnan(x)
    is_neg = (x_negative & (lax.rem(floor_x, lax._const(x, 2)) != 0)) | \
        ((x == 0) & ufuncs.signbit(x))
    one = lax.full_like(x, 1)
    return selection.where(is_nan, lax.full_like(x, np.nan), selection.where(is_neg, -one, one))


def gamma(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.gamma``: ``gammasgn(x) exp(lgamma(x))`` for real ``x``;
    for complex ``x`` the Lanczos approximation with reflection (NaN at the poles)."""
    x, = promote_args_inexact("gamma", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _complex_gamma(x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def loggamma(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.loggamma``: ``lgamma(x)`` for real x > 0 (NaN
    elsewhere); for complex ``x`` scipy's branch (the imaginary part continuous off the
    negative real axis), by shifting to Re z >= 1/2 with log Γ(z) = log Γ(z + n) -
    sum_k log(z + k). Differs from JAX in bounding the shift: n <= 64, so Re z < -63.5 is
    NaN (JAX shifts as far as needed in a ``while_loop``)."""
    x, = promote_args_inexact("loggamma", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _complex_loggamma_scipy(x)
    return selection.where(x > 0, lax.lgamma(x), lax.full_like(x, np.nan))


# The Lanczos approximation with g = 7 and 9 terms (accurate to ~1e-15 for Re z >= 1/2).
_LANCZOS_G = 7.0
_LANCZOS_COEFFS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
                   771.32342877765313, -176.61502916214059, 12.507343278686905,
                   -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)
_MAX_SHIFT = 64


def _lanczos_loggamma(z: Any) -> Any:
    """log Γ(z) for Re z >= 1/2."""
    zz = z - 1.
    ag = lax.full_like(z, _LANCZOS_COEFFS[0])
    for k, c in enumerate(_LANCZOS_COEFFS[1:], start=1):
        ag = ag + c / (zz + float(k))
    t = zz + (_LANCZOS_G + 0.5)
    return float(0.5 * np.log(2 * np.pi)) + (zz + 0.5) * ufuncs.log(t) - t + ufuncs.log(ag)


def _complex_poles(z: Any) -> Any:
    re = ufuncs.real(z)
    return ufuncs.isnan(z) | ((ufuncs.imag(z) == 0) & (re == ufuncs.floor(re)) & (re <= 0))


def _complex_gamma(z: Any) -> Any:
    bad = _complex_poles(z)
    z = selection.where(bad, lax.full_like(z, 1), z)
    reflect = ufuncs.real(z) < 0.5
    z_right = selection.where(reflect, 1. - z, z)
    log_gamma = _lanczos_loggamma(z_right)
    z_left = selection.where(reflect, z, lax.full_like(z, 0.5))
    # Γ(z) Γ(1 - z) = π / sin(π z).
    value = selection.where(reflect, np.pi / (ufuncs.sin(np.pi * z_left) * ufuncs.exp(log_gamma)),
                            ufuncs.exp(log_gamma))
    return selection.where(bad, lax.full_like(value, complex(np.nan, np.nan)), value)


def _complex_loggamma_scipy(z: Any) -> Any:
    bad = _complex_poles(z)
    z = selection.where(bad, lax.full_like(z, 1), z)
    n = ufuncs.maximum(0., ufuncs.ceil(0.5 - ufuncs.real(z)))
    shifted = z + n.astype(z.dtype)
    log_terms = lax.full_like(z, 0)
    for k in range(_MAX_SHIFT):
        use = k < n
        log_terms = log_terms + selection.where(
            use, ufuncs.log(selection.where(use, z + float(k), lax.full_like(z, 1))),
            lax.full_like(z, 0))
    value = _lanczos_loggamma(shifted) - log_terms
    bad = bad | (n > _MAX_SHIFT)
    return selection.where(bad, lax.full_like(value, complex(np.nan, np.nan)), value)


# Stirling's correction lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) =
# sum_k B_2k / (2k (2k - 1) x^(2k - 1)), accurate to float64 for x >= 8.
_STIRLING = [float(lax_special._BERNOULLI[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, 11)]


def _stirling_correction(x: Any) -> Any:
    inv = 1. / x
    inv2 = inv * inv
    acc = lax.full_like(x, _STIRLING[-1])
    for c in reversed(_STIRLING[:-1]):
        acc = acc * inv2 + c
    return acc * inv


def betaln(a: Any, b: Any) -> Any:
    """Mirrors ``jax.scipy.special.betaln``: ``log|B(a, b)|``; for the larger argument
    b >= 8, ``lgamma(b) - lgamma(a + b)`` is computed by Stirling's series (JAX's algdiv
    for the same purpose), which stays accurate where b >> a."""
    a, b = promote_args_inexact("betaln", a, b)
    a, b = ufuncs.minimum(a, b), ufuncs.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    safe_b = selection.where(b < 8, lax.full_like(b, 8), b)
    ratio = a / safe_b
    large_b = lax.lgamma(a) + (-a * lax.log(safe_b) - (a + safe_b - 0.5) * lax.log1p(ratio) + a
                               + _stirling_correction(safe_b) - _stirling_correction(a + safe_b))
    return selection.where(b < 8, small_b, large_b)


def beta(a: Any, b: Any) -> Any:
    """Mirrors ``jax.scipy.special.beta``: ``Γ(a) Γ(b) / Γ(a + b)`` with its sign."""
    a, b = promote_args_inexact("beta", a, b)
    _real_only("beta", a)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Mirrors ``jax.scipy.special.betainc``: the regularized incomplete beta function."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    _real_only("betainc", x)
    return lax_special.betainc(a, b, x)


def gammainc(a: Any, x: Any) -> Any:
    """Mirrors ``jax.scipy.special.gammainc``: the regularized lower incomplete gamma
    function P(a, x)."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax_special.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """Mirrors ``jax.scipy.special.gammaincc``: Q(a, x) = 1 - P(a, x)."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax_special.igammac(a, x)


def factorial(n: Any, exact: bool = False) -> Any:
    """Mirrors ``jax.scipy.special.factorial``: ``Γ(n + 1)``, 0 for n < 0 (``exact=True``
    raises NotImplementedError, as in JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = promote_args_inexact("factorial", n)
    return selection.where(n < 0, lax.full_like(n, 0), lax.exp(lax.lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """Mirrors ``jax.scipy.special.comb`` (``exact=False``): ``N choose k`` through lgamma,
    0 outside 0 <= k <= N."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        return selection.where((k == 0) & (N >= 0), lax.full_like(N, 1), comb(N + k - 1, k))
    cond = (k <= N) & (N >= 0) & (k >= 0)
    safe_N = selection.where(cond, N, lax.full_like(N, 0))
    safe_k = selection.where(cond, k, lax.full_like(k, 0))
    result = lax.exp(lax.lgamma(safe_N + 1) - lax.lgamma(safe_k + 1)
                     - lax.lgamma(safe_N + 1 - safe_k))
    return selection.where(cond, result, lax.full_like(result, 0))


@custom_jvp
def poch(z: Any, m: Any) -> Any:
    """Mirrors ``jax.scipy.special.poch``: the rising factorial ``Γ(z + m) / Γ(z)``."""
    z, m = promote_args_inexact("poch", z, m)
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return selection.where(m == 0., lax.full_like(z, 1), gamma(z + m) / gamma(z))


poch.defjvps(lambda z_dot, ans, z, m: (lax.digamma(z + m) - lax.digamma(z)) * ans * z_dot,
             lambda m_dot, ans, z, m: lax.digamma(z + m) * ans * m_dot)


def multigammaln(a: Any, d: Any) -> Any:
    """Mirrors ``jax.scipy.special.multigammaln``: the log of the multivariate gamma
    function of dimension ``d`` (a concrete integer)."""
    d = _concrete_int(d, "d argument of multigammaln")
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = 0.25 * d_ * (d_ - 1) * lax.log(lax._const(a, np.pi))
    b = creation.arange(d, dtype=d_.dtype) / 2
    return reductions.sum(lax.lgamma(shape.expand_dims(a, -1) - b), axis=-1) + constant


def polygamma(n: Any, x: Any) -> Any:
    """Mirrors ``jax.scipy.special.polygamma``: the n-th derivative of digamma (``n`` of an
    integer dtype)."""
    if not dtypes.issubdtype(dtypes.dtype(n), np.integer):
        raise ValueError("Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{dtypes.dtype(n)}.")
    n, x = promote_args_inexact("polygamma", n, x)
    _real_only("polygamma", x)
    return lax_special.polygamma(n, x)


def zeta(x: Any, q: Any | None = None) -> Any:
    """Mirrors ``jax.scipy.special.zeta``: the Hurwitz zeta function (``q=None``, the
    Riemann zeta function, raises NotImplementedError as in JAX). Differentiable in both
    arguments through the Euler-Maclaurin sum it is computed by."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    x, q = promote_args_inexact("zeta", x, q)
    return lax_special.zeta(x, q)


def bernoulli(n: int) -> Any:
    """Mirrors ``jax.scipy.special.bernoulli``: the Bernoulli numbers B_0 .. B_n (B_1 =
    -1/2), in the default float dtype. Computed exactly (``n`` is a concrete integer)."""
    n = _concrete_int(n, "Argument n of bernoulli")
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    values = lax_special._bernoulli_numbers(n)
    return creation.asarray(np.array([float(v) for v in values]), dtype=dtypes.canonicalize_dtype(
        np.float64))
