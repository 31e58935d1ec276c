"""``jax.scipy.special.hyp1f1``: Kummer's confluent hypergeometric function, by its power
series for |x| < 100 and its asymptotic series beyond, as in JAX; both run a fixed 250
terms (JAX's cap for its ``while_loop``s), so the function is one fused kernel under
``jit``."""
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
