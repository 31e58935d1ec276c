"""``jax.scipy.special.sici``: the sine and cosine integrals Si(x) = ∫_0^x sin t / t dt
and Ci(x) = γ + log x + ∫_0^x (cos t - 1) / t dt. JAX ports Cephes' rational fits; here
the power series below |x| = 2 and above it the continued fraction of
E1(ix) = -Ci(x) + i (Si(x) - π/2) (modified Lentz, complex), each a fixed number of
terms."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact

_EULER = 0.5772156649015329
_SPLIT = 2.


def _series(t: Any) -> tuple[Any, Any]:
    """Si and Ci - γ - log t by their power series (t <= 2: 20 terms reach float64)."""
    si, ci = jnp.zeros_like(t), jnp.zeros_like(t)
    term = jnp.ones_like(t)  # t^k / k!
    for k in range(1, 28):
        term = term * t / k
        sign = -1. if ((k - 1) // 2) % 2 else 1.
        if k % 2:
            si = si + sign * term / k
        else:
            ci = ci - sign * term / k
    return si, ci


def _continued_fraction(t: Any, steps: int) -> tuple[Any, Any]:
    """Si and Ci for t > 2 from E1(it) = e^(-it) / (1 + it - 1²/(3 + it - 2²/(5 + it - ...)))."""
    zeros = jnp.zeros_like(t)
    b = lax.complex(jnp.ones_like(t), t)
    c = lax.complex(jnp.full_like(t, 1e30), zeros)
    d = 1. / b
    h = d
    for i in range(2, steps + 1):
        a = -float((i - 1) ** 2)
        b = b + 2.
        d = 1. / (a * d + b)
        c = b + a / c
        h = h * (c * d)
    h = h * lax.complex(lax.cos(t), -lax.sin(t))
    return np.pi / 2 + jnp.imag(h), -jnp.real(h)


@custom_jvp
def _sici(x: Any) -> tuple[Any, Any]:
    t = jnp.abs(x)
    small = t <= _SPLIT
    ts = jnp.where(small, t, 1.)
    si_s, ci_s = _series(ts)
    ci_s = ci_s + _EULER + lax.log(ts)
    steps = 80 if x.dtype == np.float64 else 40
    si_l, ci_l = _continued_fraction(jnp.where(small, 2 * _SPLIT, t), steps)
    si = jnp.where(small, si_s, si_l)
    ci = jnp.where(small, ci_s, ci_l)
    si = jnp.where(jnp.isinf(t), np.pi / 2, si)
    ci = jnp.where(jnp.isinf(t), 0., ci)
    ci = jnp.where(t == 0, -np.inf, ci)
    return jnp.where(x < 0, -si, si), ci


@_sici.defjvp
def _sici_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (g,) = primals, tangents
    # dSi/dx = sin x / x (1 at 0), dCi/dx = cos x / x.
    safe = jnp.where(x == 0, 1., x)
    dsi = jnp.where(x == 0, 1., lax.sin(safe) / safe)
    return _sici(x), (g * dsi, g * lax.cos(x) / x)


def sici(x: Any) -> tuple[Any, Any]:
    """Mirrors ``jax.scipy.special.sici``: (Si(x), Ci(x)) for real ``x``; Ci(-x) = Ci(x)
    and Ci(0) = -inf, as JAX and scipy give them."""
    x, = promote_args_inexact("sici", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    if x.dtype.itemsize < 4:
        si, ci = _sici(x.astype(np.float32))
        return si.astype(x.dtype), ci.astype(x.dtype)
    return _sici(x)
