"""``jax.scipy.stats.gennorm``: the generalized normal distribution."""
from __future__ import annotations

from typing import Any

from tinyxla._src.lax import lax
from tinyxla._src.lax import special as lax_special
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, beta: Any) -> Any:
    """Mirrors ``jax.scipy.stats.gennorm.logpdf``: ``log(β / 2) - lgamma(1/β) - |x|^β``."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x: Any, beta: Any) -> Any:
    """Mirrors ``jax.scipy.stats.gennorm.cdf``: ``(1 + sign(x) P(1/β, |x|^β)) / 2``."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + lax.sign(x) * lax_special.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x: Any, beta: Any) -> Any:
    """Mirrors ``jax.scipy.stats.gennorm.pdf``."""
    return lax.exp(logpdf(x, beta))
