"""``jax.scipy.stats.logistic``."""
from __future__ import annotations

from typing import Any

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.special import expit, logit


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.logistic.logpdf``: ``-2 logaddexp(z/2, -z/2) - log scale``."""
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    half_z = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half_z, -half_z) - lax.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.logistic.pdf``."""
    return lax.exp(logpdf(x, loc, scale))


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.logistic.ppf``: ``loc + scale logit(q)``."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.logistic.sf``: ``expit(-z)``."""
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(-(x - loc) / scale)


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.logistic.isf``: ``loc - scale logit(q)``."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.logistic.cdf``: ``expit(z)``."""
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)
