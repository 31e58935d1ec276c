"""``jax.scipy.special.wofz`` (the Faddeeva function w(z) = e^(-z²) erfc(-iz)), ``fresnel`` and
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


_wofz.defjvps(lambda g, ans, z: g * (-2 * z * ans + complex(2j / np.sqrt(np.pi))))


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


def fresnel(x: Any) -> tuple[Any, Any]:
    """Mirrors ``jax.scipy.special.fresnel``: the Fresnel integrals (S(x), C(x)) =
    ∫_0^x (sin, cos)(π t² / 2) dt for real ``x``. Differs from JAX in the method: from
    C + iS = (1 + i)/2 erf((1 - i)√π x / 2), the erf through ``w`` (JAX ports Cephes'
    rational fits)."""
    x, = promote_args_inexact("fresnel", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if x.dtype.itemsize < 4:
        s, c = _fresnel(x.astype(np.float32))
        return s.astype(x.dtype), c.astype(x.dtype)
    return _fresnel(x)


@custom_jvp
def _fresnel(x: Any) -> tuple[Any, Any]:
    ax = jnp.abs(x)
    half_root_pi = float(np.sqrt(np.pi) / 2)
    # erfc(z) = e^(-z²) w(iz), z = (1 - i) a, a = √π |x| / 2: iz = (1 + i) a lies in the
    # upper half plane and e^(-z²) = e^(i π x² / 2).
    a = half_root_pi * ax
    w = _wofz_upper(lax.complex(a, a))
    phase = 0.5 * np.pi * ax * ax
    e = lax.complex(lax.cos(phase), lax.sin(phase))
    erf = 1 - e * w
    # C + iS = (1 + i) erf / 2.
    c = 0.5 * (jnp.real(erf) - jnp.imag(erf))
    s = 0.5 * (jnp.real(erf) + jnp.imag(erf))
    # Near 0, where 1 - e w cancels, the power series (12 terms reach float64 at |x| <= 1).
    xs = jnp.where(ax <= 1., ax, 0.)
    t = 0.5 * np.pi * xs * xs
    s_series, c_series = jnp.zeros_like(xs), jnp.zeros_like(xs)
    term = xs  # (π/2)^k x^(2k+1) / k!, alternating between C's and S's terms
    for k in range(24):
        if k:
            term = term * t / k
        sign = -1. if (k // 2) % 2 else 1.
        if k % 2:
            s_series = s_series + sign * term / (2 * k + 1)
        else:
            c_series = c_series + sign * term / (2 * k + 1)
    s = jnp.where(ax <= 1., s_series, s)
    c = jnp.where(ax <= 1., c_series, c)
    # Past where the phase keeps no significant digits: the limits 1/2 (Cephes' float32
    # bound 36974; float64 keeps the phase's digits to 1e8).
    far = ax > (1e8 if x.dtype == np.float64 else 36974.)
    s = jnp.where(far, 0.5, s)
    c = jnp.where(far, 0.5, c)
    negative = x < 0
    return jnp.where(negative, -s, s) + 0., jnp.where(negative, -c, c) + 0.


@_fresnel.defjvp
def _fresnel_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    phase = 0.5 * np.pi * x * x
    return _fresnel(x), (t * lax.sin(phase), t * lax.cos(phase))
