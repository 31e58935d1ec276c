"""``jax.scipy.stats.gumbel_r``: the right-skewed Gumbel distribution."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.special import xlogy
from tinyxla._src.scipy.stats._gumbel import where_scale_ok


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_r.logpdf``: ``-(z + e^-z) - log scale``."""
    x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return where_scale_ok(scale, xlogy(-1, scale) - (z + lax.exp(-z)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_r.pdf``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_r.logcdf``: ``-e^-z``."""
    x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    return where_scale_ok(scale, -lax.exp(-(x - loc) / scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_r.cdf``."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_r.ppf``: ``loc - scale log(-log p)``; NaN off (0, 1)."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    quantile = loc - scale * lax.log(xlogy(-1, p))
    return jnp.where((p > 0) & (p < 1), quantile, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_r.sf``: ``1 - exp(-e^-z)``."""
    x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
    return where_scale_ok(scale, 1 - lax.exp(-lax.exp((loc - x) / scale)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_r.logsf``: ``log(1 - exp(-e^-z))``, through
    ``expm1`` or ``log1p`` whichever keeps the digits (JAX's ``log1mexp``)."""
    x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
    t = lax.exp((loc - x) / scale)
    log_sf = jnp.where(t < np.log(2.), lax.log(-lax.expm1(-t)), lax.log1p(-lax.exp(-t)))
    return where_scale_ok(scale, log_sf)
