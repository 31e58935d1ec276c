"""``jax.scipy.special``'s ``log_ndtr`` (the log of the standard normal CDF, accurate in
both tails) and ``erfcx`` (the scaled complementary error function ``e^(x²) erfc(x)``)."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy import creation, selection
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy import faddeeva
from tinyxla._src.scipy.special import ndtr

# Below LOWER log(ndtr) underflows, so the asymptotic series is used; above UPPER
# log(ndtr(x)) = log1p(-ndtr(-x)) ~ -ndtr(-x) (JAX's segment bounds).
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10., 5.), np.dtype(np.float64): (-20., 8.)}


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """Mirrors ``jax.scipy.special.log_ndtr``: ``log(ndtr(x))``, by the asymptotic series
    of order ``series_order`` in the far lower tail (float32/float64 only, as in JAX).
    Differs from JAX for 0 < x <= 5 (float32) / 8 (float64): ``log1p(-ndtr(-x))`` there,
    not ``log(ndtr(x))``, which loses the relative accuracy of the small result."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    return _log_ndtr(x, series_order)


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _log_ndtr(x: Any, series_order: int) -> Any:
    x = creation.asarray(x)
    segments = _LOG_NDTR_SEGMENTS.get(np.dtype(x.dtype))
    if segments is None:
        raise TypeError(f"x.dtype={np.dtype(x.dtype)} is not supported.")
    lower, upper = (x.dtype.type(v) for v in segments)
    above = x > upper
    positive = x > 0
    # For x > 0, log(ndtr(x)) = log1p(-ndtr(-x)) keeps the digits log(1 - tiny) loses.
    ndtr_value = ndtr(selection.where(positive, -x, lax.max(x, lax.full_like(x, lower))))
    return selection.where(
        above, -ndtr_value,
        selection.where(positive, lax.log1p(-ndtr_value),
                        selection.where(x > lower, lax.log(ndtr_value),
                                        _log_ndtr_lower(lax.min(x, lax.full_like(x, lower)),
                                                        series_order))))


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    """log ndtr(x) for x -> -inf: log(φ(x) / -x) + log(1 + sum_n (-1)^n (2n-1)!! / x^2n)."""
    dtype = x.dtype.type
    x_2 = lax.square(x)
    log_scale = dtype(-0.5) * x_2 - lax.log(-x) - dtype(0.5 * np.log(2. * np.pi))
    series = lax.full_like(x, 1)
    x_2n = x_2
    double_factorial = 1
    for n in range(1, series_order + 1):
        double_factorial *= 2 * n - 1
        term = dtype(double_factorial) / x_2n
        series = series - term if n % 2 else series + term
        x_2n = x_2n * x_2
    return log_scale + lax.log(series)


def _log_ndtr_jvp(series_order: int, primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    log_pdf = -0.5 * lax.square(x) - lax._const(x, 0.5 * np.log(2 * np.pi))
    return ans, t * lax.exp(log_pdf - ans)


_log_ndtr.defjvp(_log_ndtr_jvp)


def erfcx(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.erfcx`` for real ``x``: ``e^(x²) erfc(x)``, by its
    asymptotic series for large x (from x = 8 in float32, where JAX's ``erfc`` underflows
    first and JAX returns 0 up to 9.4); ``wofz(iz)`` for complex ``z``."""
    x, = promote_args_inexact("erfcx", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return faddeeva.wofz(lax.complex(-lax.imag(x), lax.real(x)))  # erfcx(z) = w(iz)
    if x.dtype.itemsize < 4:
        return _erfcx(x.astype(np.float32)).astype(x.dtype)
    return _erfcx(x)


@custom_jvp
def _erfcx(x: Any) -> Any:
    n_terms = 9 if x.dtype == np.float64 else 5
    # Below JAX's threshold sqrt(log(max)) erfc(x) is already subnormal (flushed to 0):
    # JAX returns 0 for x in (7.9, 9.4) in float32; the series is accurate from here.
    threshold = 20. if x.dtype == np.float64 else 8.
    large = x > threshold
    safe_x = selection.where(large, lax.full_like(x, 1), x)
    direct = lax.exp(lax.square(safe_x)) * lax.erfc(safe_x)
    # erfcx(x) ~ (1 / (x sqrt(pi))) sum_n (-1)^n (2n-1)!! / (2x²)^n
    inv_2x2 = 1. / (2. * lax.square(x))
    total, term = lax.full_like(x, 1), lax.full_like(x, 1)
    for n in range(1, n_terms):
        term = term * (-(2. * n - 1.)) * inv_2x2
        total = total + term
    asymptotic = total / (x * float(np.sqrt(np.pi)))
    return selection.where(large, asymptotic, direct)


_erfcx.defjvps(lambda g, ans, x: g * (2. * x * ans - float(2. / np.sqrt(np.pi))))
