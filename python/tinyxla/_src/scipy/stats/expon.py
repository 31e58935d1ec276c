"""``jax.scipy.stats.expon``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.expon.logpdf``: ``-(x - loc) / scale - log scale``."""
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    log_probs = -((x - loc) / scale + lax.log(scale))
    return jnp.where(x < loc, -np.inf, log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.expon.pdf``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.expon.cdf``: ``-expm1(-(x - loc) / scale)``."""
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    neg_scaled_x = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg_scaled_x), -lax.expm1(neg_scaled_x))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.expon.logsf``: ``-(x - loc) / scale``, 0 below loc."""
    x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)
    neg_scaled_x = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg_scaled_x), neg_scaled_x)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.expon.sf``."""
    return lax.exp(logsf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.expon.logcdf``: ``log1p(-sf)``."""
    return lax.log1p(-sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.expon.ppf``: ``loc - scale log1p(-q)``; NaN off [0, 1]."""
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc - scale * lax.log1p(-q))
