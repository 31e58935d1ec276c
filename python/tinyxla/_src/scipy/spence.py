"""``jax.scipy.special.spence``: Spence's function (the dilogarithm ``Li2(1 - x)``)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tinyxla._src.lax import lax
from tinyxla._src.lax import special as lax_special
from tinyxla._src.numpy import creation, selection

# Li2(w) = sum_k B_k u^(k+1) / (k+1)!, u = -log(1 - w) (B_1 = -1/2); |u| <= log 2 on the
# interval w in [-1, 1/2] it is used on, where 20 terms reach float64 accuracy.
_LI2_COEFFS = [float(b) / math.factorial(k + 1)
               for k, b in enumerate(lax_special._bernoulli_numbers(24))]


def _li2_near_zero(w: Any) -> Any:
    u = -lax.log1p(-w)
    acc = lax.full_like(u, _LI2_COEFFS[-1])
    for c in reversed(_LI2_COEFFS[:-1]):
        acc = acc * u + c
    return acc * u


def spence(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.spence``: ``∫_1^x log(t) / (1 - t) dt = Li2(1 - x)`` for
    x >= 0, NaN for x < 0 (float32/float64 only, as in JAX). Differs from JAX in the
    method: the dilogarithm's Bernoulli series after reflection and inversion, where JAX
    uses Cephes' rational approximation."""
    x = creation.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    pi2_6 = np.pi ** 2 / 6
    one = lax.full_like(x, 1)
    small = x < 0.5   # Li2(1-x) = pi²/6 - log(x) log(1-x) - Li2(x)
    large = x > 2.    # z = 1-x < -1: Li2(z) = -pi²/6 - log²(-z)/2 - Li2(1/z)
    safe_x = selection.where((x > 0) & (x != 1), x, lax.full_like(x, 0.5))
    # Each branch gets arguments inside its domain, so no NaN reaches the gradient.
    x_small = selection.where(small, safe_x, lax.full_like(x, 0.25))
    x_large = selection.where(large, safe_x, lax.full_like(x, 3.))
    w = selection.where(small, x_small, selection.where(large, 1. / (1. - x_large), 1. - safe_x))
    li2 = _li2_near_zero(w)
    value = selection.where(
        small, pi2_6 - lax.log(x_small) * lax.log1p(-x_small) - li2,
        selection.where(large, -pi2_6 - 0.5 * lax.square(lax.log(x_large - one)) - li2, li2))
    value = selection.where(x == 0, lax.full_like(x, pi2_6), value)
    value = selection.where(x == 1, lax.full_like(x, 0), value)
    return selection.where(x < 0, lax.full_like(x, np.nan), value)
