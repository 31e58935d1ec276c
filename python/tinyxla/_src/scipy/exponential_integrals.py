"""``jax.scipy.special``'s exponential integrals ``exp1``, ``expn`` and ``expi``.

JAX evaluates them with Cephes' piecewise rational fits and ``while_loop`` series; here
(no ``while_loop`` yet) each is a fixed number of terms: the power series where it
converges fast, the continued fraction (E_n, x > 1) or the asymptotic series (Ei, large
x) elsewhere, so they run as one fused kernel under ``jit``.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact

_EULER = 0.5772156649015329


def _en_series(n: Any, x: Any, terms: int) -> Any:
    """E_n(x) for x <= 1 by its power series (DLMF 8.19.8), n >= 1 an integer."""
    nm1 = n - 1
    is_one = nm1 == 0
    ans = jnp.where(is_one, -lax.log(x) - _EULER, 1. / jnp.where(is_one, 1., nm1))
    psi = lax.digamma(n)  # -γ + sum_{k < n} 1/k
    fact = jnp.ones_like(x)
    for i in range(1, terms + 1):
        fact = fact * (-x / i)
        at_log = nm1 == i
        safe = jnp.where(at_log, 1., i - nm1)
        ans = ans + jnp.where(at_log, fact * (-lax.log(x) + psi), -fact / safe)
    return ans


def _en_continued_fraction(n: Any, x: Any, steps: int) -> Any:
    """E_n(x) for x > 1 by its continued fraction (modified Lentz), n >= 1."""
    tiny = 1e-30
    b = x + n
    c = jnp.full_like(x, 1. / tiny)
    d = 1. / b
    h = d
    for i in range(1, steps + 1):
        an = -i * (n - 1 + i)
        b = b + 2.
        d = 1. / (an * d + b)
        c = b + an / c
        h = h * (c * d)
    return h * lax.exp(-x)


def _expn(n: Any, x: Any) -> Any:
    f64 = x.dtype == np.float64
    large = x > 1.
    x_small = jnp.where(large, 0.5, x)
    x_large = jnp.where(large, x, 2.)
    n_pos = jnp.where(n >= 1, n, 1.)
    value = jnp.where(large, _en_continued_fraction(n_pos, x_large, 60 if f64 else 30),
                      _en_series(n_pos, x_small, 25 if f64 else 14))
    value = jnp.where(n == 0, lax.exp(-x) / x, value)
    at_zero = jnp.where(n <= 1, np.inf, 1. / jnp.where(n <= 1, 1., n - 1))
    value = jnp.where(x == 0, at_zero, value)
    return jnp.where((n < 0) | (x < 0) | jnp.isnan(x), np.nan, value)


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _expn_of(n: Any, x: Any) -> Any:
    return _expn(n.astype(x.dtype), x)


@_expn_of.defjvp
def _expn_jvp(n: Any, primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    # dE_n/dx = -E_{n-1}, with E_{-1}(x) = e^-x (1/x + 1/x²) (JAX gives NaN at n = 0).
    e_minus_1 = lax.exp(-x) * (1. / x + 1. / (x * x))
    return _expn_of(n, x), -t * jnp.where(n == 0, e_minus_1, _expn_of(jnp.maximum(n - 1, 0), x))


def expn(n: Any, x: Any) -> Any:
    """Mirrors ``jax.scipy.special.expn``: the generalized exponential integral E_n(x) for
    integer n >= 0 (NaN for n < 0 or x < 0; inf at x = 0 for n <= 1, else 1/(n-1));
    differentiable in ``x``."""
    n = jnp.asarray(n)
    if not dtypes.issubdtype(n.dtype, np.integer):
        raise ValueError(f"Argument `n` to expn must be of integer type. Got dtype {n.dtype}.")
    x, = promote_args_inexact("expn", x)
    n, x = jnp.broadcast_arrays(n, x)
    return _expn_of(n, x)


def exp1(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.exp1``: E_1(x) = ∫_x^∞ e^-t / t dt (NaN for x < 0)."""
    x, = promote_args_inexact("exp1", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("exp1 does not support complex-valued inputs.")
    return expn(jnp.ones(x.shape, np.int32), x)


def _ei_positive(x: Any) -> Any:
    f64 = x.dtype == np.float64
    split, series_terms = (40., 120) if f64 else (20., 60)
    small = x <= split
    xs = jnp.where(small, x, 1.)
    term = jnp.ones_like(xs)
    total = jnp.zeros_like(xs)
    for k in range(1, series_terms + 1):
        term = term * xs / k
        total = total + term / k
    series = _EULER + lax.log(xs) + total
    xl = jnp.where(small, split, x)
    term = jnp.ones_like(xl)
    total = term
    for k in range(1, int(split)):
        term = term * k / xl
        total = total + term
    asymptotic = lax.exp(xl) / xl * total
    return jnp.where(small, series, asymptotic)


@custom_jvp
def _expi(x: Any) -> Any:
    positive = x > 0
    value = jnp.where(positive, _ei_positive(jnp.where(positive, x, 1.)),
                      -_expn(jnp.ones_like(x), jnp.where(positive, 1., -x)))
    return jnp.where(x == 0, -np.inf, value)


_expi.defjvps(lambda t, ans, x: t * lax.exp(x) / x)


def expi(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.expi``: Ei(x), the principal value of ∫_-∞^x e^t / t dt;
    ``-inf`` at 0 as scipy (JAX gives NaN there)."""
    x, = promote_args_inexact("expi", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("expi does not support complex-valued inputs.")
    return _expi(x)
