"""``jax.scipy.special.wofz`` (the Faddeeva function w(z) = e^(-z²) erfc(-iz)) and
``dawsn`` (Dawson's integral, (√π/2) Im w(x) for real x), by Weideman's rational
approximation as in JAX: its 32 coefficients are made here the way Weideman (1994) makes
them, by an FFT of the weight on the mapped line."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact, promote_dtypes_inexact


def _weideman_coefficients(n: int) -> tuple[float, np.ndarray]:
    """L and the coefficients (highest power first) of Weideman's n-term approximation."""
    m = 2 * n
    length = np.sqrt(n / np.sqrt(2))
    theta = np.arange(-m + 1, m) * np.pi / m
    t = length * np.tan(theta / 2)
    f = np.concatenate([[0.], np.exp(-t ** 2) * (length ** 2 + t ** 2)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return float(length), np.flipud(a[1:n + 1])


_L, _COEFFS = _weideman_coefficients(32)


def _wofz_upper(z: Any) -> Any:
    """w(z) for Im z >= 0."""
    iz = lax.complex(-jnp.imag(z), jnp.real(z))
    denom = _L - iz
    big_z = (_L + iz) / denom
    p = jnp.zeros_like(big_z)
    for c in _COEFFS:
        p = p * big_z + float(c)
    return 2 * p / (denom * denom) + float(1 / np.sqrt(np.pi)) / denom


@custom_jvp
def _wofz(z: Any) -> Any:
    upper = jnp.imag(z) >= 0
    z_upper = jnp.where(upper, z, -z)
    w_upper = _wofz_upper(z_upper)
    # w(z) = 2 e^(-z²) - w(-z) below the real axis.
    return jnp.where(upper, w_upper, 2 * jnp.exp(-z * z) - w_upper)


_wofz.defjvps(lambda g, ans, z: g * (-2 * z * ans + 2j / np.sqrt(np.pi)))


def wofz(z: Any) -> Any:
    """Mirrors ``jax.scipy.special.wofz``: the Faddeeva function, complex-valued (real
    arguments are promoted to complex)."""
    z, = promote_dtypes_inexact(jnp.asarray(z))
    if not dtypes.issubdtype(z.dtype, np.complexfloating):
        z = z.astype(np.complex128 if z.dtype == np.float64 else np.complex64)
    return _wofz(z)


def dawsn(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.dawsn``: Dawson's integral ``e^(-x²) ∫_0^x e^(t²) dt``.
    Differs from JAX in the method: (√π/2) Im w(x) (Weideman) instead of Cephes' rational
    fits (relative error ~4e-13 in float64)."""
    x, = promote_args_inexact("dawsn", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("dawsn does not support complex-valued inputs.")
    if x.dtype.itemsize < 4:
        return _dawsn(x.astype(np.float32)).astype(x.dtype)
    return _dawsn(x)


@custom_jvp
def _dawsn(x: Any) -> Any:
    w = _wofz_upper(lax.complex(x, jnp.zeros_like(x)))
    return float(np.sqrt(np.pi) / 2) * jnp.imag(w)


_dawsn.defjvps(lambda g, ans, x: g * (1. - 2. * x * ans))
