"""``jax.scipy.special.sph_harm_y``: spherical harmonics Y_n^m(θ, φ) (θ the polar angle),
from the normalized associated Legendre functions by their stable three-term recurrences
up to the static degree ``n_max``, as in JAX."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import core, errors
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_dtypes_inexact


def _normalized_legendre(n_max: int, x: Any) -> list[list[Any]]:
    """P̄_l^m(x) for 0 <= m <= l <= n_max, normalized so that P̄_l^m(cos θ) e^(imφ) is
    Y_l^m (Condon-Shortley phase included): ``table[m][l]`` (None for l < m)."""
    sin = jnp.sqrt(jnp.maximum(1 - x * x, 0.))
    table: list[list[Any]] = [[None] * (n_max + 1) for _ in range(n_max + 1)]
    diag = jnp.full_like(x, float(1 / np.sqrt(4 * np.pi)))
    for m in range(n_max + 1):
        if m:
            diag = -float(np.sqrt((2 * m + 1) / (2 * m))) * sin * diag
        table[m][m] = diag
        if m + 1 <= n_max:
            table[m][m + 1] = float(np.sqrt(2 * m + 3)) * x * diag
        for l in range(m + 2, n_max + 1):
            a = float(np.sqrt((4 * l * l - 1) / (l * l - m * m)))
            b = float(np.sqrt(((l - 1) ** 2 - m * m) / (4 * (l - 1) ** 2 - 1)))
            table[m][l] = a * (x * table[m][l - 1] - b * table[m][l - 2])
    return table


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """Mirrors ``jax.scipy.special.sph_harm_y``: Y_n^m(θ, φ) (complex) for integer n >= |m|;
    ``n_max`` (default: the largest ``n``, which must then be concrete) bounds the degree.
    The arguments broadcast (JAX takes 1-d ``n``, ``m`` and ``theta`` of one length)."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to jax.scipy.special.sph_harm_y is "
                                  "not supported.")
    n, m = jnp.asarray(n), jnp.asarray(m)
    if n_max is None:
        if isinstance(n, core.Tracer):
            raise errors.ConcretizationTypeError(
                n, "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
                   "specified to use `sph_harm` within JAX transformations.")
        n_max = int(np.max(np.asarray(n)))
    n_max = int(n_max)
    theta, phi = promote_dtypes_inexact(jnp.asarray(theta), jnp.asarray(phi))
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    table = _normalized_legendre(n_max, jnp.cos(theta))
    abs_m = jnp.abs(m)
    legendre = jnp.zeros_like(theta)
    for k in range(n_max + 1):
        for l in range(k, n_max + 1):
            legendre = jnp.where((abs_m == k) & (n == l), table[k][l], legendre)
    angle = abs_m * phi
    harmonics = lax.complex(legendre * jnp.cos(angle), legendre * jnp.sin(angle))
    sign = jnp.where(abs_m % 2 == 1, -1., 1.).astype(theta.dtype)
    return jnp.where(m < 0, sign * jnp.conjugate(harmonics), harmonics)
