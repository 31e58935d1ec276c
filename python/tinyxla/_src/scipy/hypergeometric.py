"""``jax.scipy.special.hyp1f1`` (Kummer's confluent hypergeometric function: its power
series for |x| < 100, its asymptotic series beyond) and ``hyp2f1`` (Gauss's, by its power
series after the transformations that bring x into [0, 1)), as in JAX; the series run a
fixed 250 terms (JAX's cap for its ``while_loop``s), so each function is one fused
kernel under ``jit``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.gamma_functions import gamma

_TERMS = 250


def _series(a: Any, b: Any, x: Any, weight: str | None = None) -> Any:
    """sum_k (a)_k / (b)_k x^k / k!, or with each term weighted by ψ(a+k) - ψ(a)
    (``weight='a'``) or ψ(b) - ψ(b+k) (``weight='b'``): the derivatives in a and b."""
    total = jnp.zeros_like(x) if weight else jnp.ones_like(x)
    term = jnp.ones_like(x)
    psi_diff = jnp.zeros_like(x)  # ψ(c + k) - ψ(c) = sum_{j<k} 1 / (c + j)
    for k in range(_TERMS):
        term = term * (a + k) / (b + k) * x / (k + 1)
        if weight is None:
            total = total + term
        else:
            psi_diff = psi_diff + 1. / ((a if weight == "a" else b) + k)
            total = total + term * (psi_diff if weight == "a" else -psi_diff)
    return total


def _asymptotic(a: Any, b: Any, x: Any) -> Any:
    """Γ(b)/Γ(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k (large positive x)."""
    total, term = jnp.ones_like(x), jnp.ones_like(x)
    for k in range(_TERMS):
        term = term * (b - a + k) * (1 - a + k) / (k + 1) / x
        total = total + term
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * total


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    near = jnp.abs(x) < 100
    # Below 0 the series alternates and cancels; Kummer's transformation
    # 1F1(a; b; x) = e^x 1F1(b - a; b; -x) sums positive terms where b > a (JAX sums the
    # alternating series).
    negative = x < 0
    a_series = jnp.where(negative, b - a, a)
    x_series = jnp.where(near, jnp.abs(x), 0.)
    series = _series(a_series, b, x_series) * jnp.where(negative, lax.exp(x), 1.)
    result = jnp.where(near, series, _asymptotic(a, b, jnp.where(near, 100., x)))
    result = jnp.where((b == 0) & (a != 0), np.inf, result)
    result = jnp.where((a == b) & (a != 0), lax.exp(x), result)
    return jnp.where(a == 0, 1., result)


_hyp1f1.defjvps(lambda g, ans, a, b, x: g * _series(a, b, x, "a"),
                lambda g, ans, a, b, x: g * _series(a, b, x, "b"),
                lambda g, ans, a, b, x: g * a / b * _hyp1f1(a + 1, b + 1, x))


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Mirrors ``jax.scipy.special.hyp1f1``: 1F1(a; b; x) for real arguments; 1 at a = 0,
    e^x at a = b, inf at b = 0. Differs from JAX for -100 < x < 0 (Kummer's
    transformation, see ``_hyp1f1``). Its derivatives in a and b are the series JAX
    uses."""
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    a, b, x = jnp.broadcast_arrays(a, b, x)
    return _hyp1f1(a, b, x)


def _series2(a: Any, b: Any, c: Any, x: Any, weight: str | None = None) -> Any:
    """sum_k (a)_k (b)_k / (c)_k x^k / k! (it terminates by itself when a or b is a
    non-positive integer), or its derivative in a, b or c (``weight``)."""
    total = jnp.zeros_like(x) if weight else jnp.ones_like(x)
    term = jnp.ones_like(x)
    psi_diff = jnp.zeros_like(x)
    for k in range(_TERMS):
        term = term * (a + k) * (b + k) / (c + k) * x / (k + 1)
        if weight is None:
            total = total + term
        else:
            base = {"a": a, "b": b, "c": c}[weight]
            psi_diff = psi_diff + 1. / (base + k)
            total = total + term * (-psi_diff if weight == "c" else psi_diff)
    return total


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    d = c - a - b
    s = 1. - x
    # Below 0, Pfaff: 2F1(a, b; c; x) = (1-x)^-a 2F1(a, c-b; c; x/(x-1)), with x/(x-1) in
    # [0, 1); where c - a - b <= -1, Euler: (1-x)^d 2F1(c-a, c-b; c; x) converges faster.
    negative = x < 0
    euler = (d <= -1) & ~negative
    safe_s = jnp.where(s > 0, s, 1.)
    y = jnp.where(negative, x / (x - 1.), jnp.where(x < 1, x, 0.))
    a1 = jnp.where(euler, c - a, a)
    b1 = jnp.where(negative, c - b, jnp.where(euler, c - b, b))
    factor = jnp.where(negative, safe_s ** -a, jnp.where(euler, safe_s ** d, 1.))
    value = factor * _series2(a1, b1, c, y)
    value = jnp.where((x < 1) & (b == c), safe_s ** -a, value)
    value = jnp.where((x < 1) & (a == c) & (b != c), safe_s ** -b, value)
    at_one = gamma(c) * gamma(d) / (gamma(c - a) * gamma(c - b))
    value = jnp.where(x == 1, jnp.where(d > 0, at_one, np.inf), value)
    value = jnp.where(x > 1, np.inf, value)
    value = jnp.where((c == 0) | ((c < 0) & (c % 1 == 0)), np.inf, value)
    return jnp.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 1., value)


_hyp2f1.defjvps(lambda g, ans, a, b, c, x: g * _series2(a, b, c, x, "a"),
                lambda g, ans, a, b, c, x: g * _series2(a, b, c, x, "b"),
                lambda g, ans, a, b, c, x: g * _series2(a, b, c, x, "c"),
                lambda g, ans, a, b, c, x: g * a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x))


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Mirrors ``jax.scipy.special.hyp2f1``: Gauss's hypergeometric function for real
    arguments, x <= 1 (inf above, as JAX). Differs from JAX for x < 0 (Pfaff's
    transformation, so x < -1 converges; JAX sums the series there) and where
    c - a - b is an integer and x > 0.9 (JAX's digamma expansion; here the 250-term
    series, good to ~1e-6 at x = 0.95). Derivatives in a, b, c are the series JAX uses
    (for |x| < 1)."""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp2f1 does not support complex-valued inputs.")
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    return _hyp2f1(a, b, c, x)
