"""``jax.scipy.stats.laplace``."""
from __future__ import annotations

from typing import Any

from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.laplace.logpdf``: ``-|x - loc| / scale - log(2 scale)``."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    return -(lax.abs(x - loc) / scale + lax.log(2 * scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.laplace.pdf``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.laplace.cdf``: ``e^z / 2`` below ``loc``, ``1 - e^-z / 2``
    above."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    diff = (x - loc) / scale
    return lax.select(diff <= 0, 0.5 * lax.exp(diff), 1 - 0.5 * lax.exp(-diff))
