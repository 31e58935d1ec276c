"""Window functions: bartlett, blackman, hamming, hanning and kaiser.

Mirrors ``jax._src.numpy.window_functions``: ``M`` must be concrete; the window has the
default float dtype; ``M <= 1`` gives ones.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import ufuncs
from tinyxla._src.numpy.bessel import i0
from tinyxla._src.numpy.promotion import concrete_or_error

ArrayLike = Any


def _window(name: str, M: int, body: Callable[[Any, int], Any]) -> Any:
    M = concrete_or_error(int, M, f"M argument of jnp.{name}")
    dtype = dtypes.default_float_dtype()
    if M <= 1:
        return lax.full((M,), 1, dtype)
    return body(lax.iota(dtype, M), M)


def blackman(M: int) -> Any:
    """Mirrors ``jax.numpy.blackman``."""
    return _window("blackman", M, lambda n, M: ufuncs.add(ufuncs.subtract(
        0.42, ufuncs.multiply(0.5, ufuncs.cos(ufuncs.true_divide(ufuncs.multiply(2 * np.pi, n),
                                                                 M - 1)))),
        ufuncs.multiply(0.08, ufuncs.cos(ufuncs.true_divide(ufuncs.multiply(4 * np.pi, n),
                                                            M - 1)))))


def bartlett(M: int) -> Any:
    """Mirrors ``jax.numpy.bartlett``."""
    return _window("bartlett", M, lambda n, M: ufuncs.subtract(1, ufuncs.true_divide(
        ufuncs.abs(ufuncs.subtract(ufuncs.add(ufuncs.multiply(2, n), 1), M)), M - 1)))


def hamming(M: int) -> Any:
    """Mirrors ``jax.numpy.hamming``."""
    return _window("hamming", M, lambda n, M: ufuncs.subtract(0.54, ufuncs.multiply(
        0.46, ufuncs.cos(ufuncs.true_divide(ufuncs.multiply(2 * np.pi, n), M - 1)))))


def hanning(M: int) -> Any:
    """Mirrors ``jax.numpy.hanning``."""
    return _window("hanning", M, lambda n, M: ufuncs.multiply(0.5, ufuncs.subtract(
        1, ufuncs.cos(ufuncs.true_divide(ufuncs.multiply(2 * np.pi, n), M - 1)))))


def kaiser(M: int, beta: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.kaiser``: i0(beta sqrt(1 - ((n - alpha) / alpha)**2)) / i0(beta)."""
    def body(n: Any, M: int) -> Any:
        alpha = 0.5 * (M - 1)
        r = ufuncs.true_divide(ufuncs.subtract(n, alpha), alpha)
        arg = ufuncs.multiply(beta, ufuncs.sqrt(ufuncs.subtract(1, ufuncs.square(r))))
        return ufuncs.true_divide(i0(arg), i0(beta))
    return _window("kaiser", M, body)
