"""``jax.scipy.stats.pareto``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.pareto.logpdf``: ``log b - log scale - (b + 1) log z``,
    -inf below ``loc + scale``."""
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    z = (x - loc) / scale
    log_probs = -(lax.log(scale / b) + (b + 1) * lax.log(z))
    return jnp.where(x < loc + scale, -np.inf, log_probs)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.pareto.pdf``."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.pareto.cdf``: ``1 - z^-b``, 0 below ``loc + scale``."""
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, lax.full_like(x, 0), 1 - lax.pow(z, -b))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.pareto.logcdf``: ``log1p(-z^-b)``."""
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, -np.inf, lax.log1p(-lax.pow(z, -b)))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.pareto.logsf``: ``-b log z``, 0 below ``loc + scale``."""
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, lax.full_like(x, 0), -(b * lax.log(z)))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.pareto.sf``."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.pareto.ppf``: ``loc + scale (1 - q)^(-1/b)``; NaN off
    [0, 1]."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    value = loc + scale * lax.pow(1 - q, -(1 / b))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
