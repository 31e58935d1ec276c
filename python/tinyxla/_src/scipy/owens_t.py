"""``jax.scipy.special.owens_t``: Owen's T function by Gauss-Legendre quadrature, as in
JAX (the 26-point rule, made here from numpy's nodes)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact

# T(h, a) = a / (2π) ∫_0^1 exp(-h² (1 + a² t²) / 2) / (1 + a² t²) dt; the integrand is
# even in t, so the rule's positive nodes (squared) and halved weights cover [0, 1].
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(26)
_QUAD_T2 = _NODES[_NODES > 0] ** 2
_QUAD_W = _WEIGHTS[_NODES > 0] / (2 * np.pi)


def _quadrature(h: Any, a: Any) -> Any:
    r = jnp.square(a)[..., None] * _QUAD_T2.astype(a.dtype)
    integrand = jnp.exp(-0.5 * jnp.square(h)[..., None] * (1. + r)) / (1. + r)
    return a * jnp.sum(integrand * _QUAD_W.astype(a.dtype), axis=-1)


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    h = jnp.abs(h)
    abs_a = jnp.abs(a)
    root_2 = float(np.sqrt(2))
    h_normed = h / root_2
    # For |a| > 1, T(h, a) = (Φ(h) + Φ(ah))/2 - Φ(h)Φ(ah) - T(ah, 1/a) (Owen's identity).
    small_a = abs_a <= 1.
    modified_a = jnp.where(small_a, abs_a, 1. / abs_a)
    modified_h = jnp.where(small_a, h, abs_a * h)
    result = _quadrature(modified_h, modified_a)
    result = jnp.where(modified_h == 0., lax.atan(modified_a) / (2 * np.pi), result)
    result = jnp.where(modified_a == 1.,
                       0.125 * lax.erfc(-modified_h / root_2) * lax.erfc(modified_h / root_2),
                       result)
    normh = lax.erfc(h_normed)
    normah = lax.erfc(abs_a * h_normed)
    result = jnp.where(
        small_a, result,
        jnp.where(abs_a * h <= 0.67,
                  0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result,
                  0.25 * (normh + normah - normh * normah) - result))
    result = lax.sign(a) * result
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(result, np.nan), result)


@_owens_t.defjvp
def _owens_t_jvp(primals: tuple, tangents: tuple) -> tuple:
    h, a = primals
    dh, da = tangents
    dout_dh = (-lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / float(np.sqrt(2)))
               / (2. * float(np.sqrt(2 * np.pi))))
    dout_da = lax.exp(-0.5 * (lax.square(a) + 1.) * lax.square(h)) / (
        2 * np.pi * (lax.square(a) + 1.))
    return _owens_t(h, a), dout_dh * dh + dout_da * da


def owens_t(h: Any, a: Any) -> Any:
    """Mirrors ``jax.scipy.special.owens_t``: T(h, a), the probability that X > h and
    0 < Y < aX for independent standard normals X, Y."""
    h, a = promote_args_inexact("owens_t", h, a)
    return _owens_t(h, a)
