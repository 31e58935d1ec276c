"""``jax.scipy.stats.gumbel_l``: the left-skewed Gumbel distribution."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.special import xlog1py, xlogy
from tinyxla._src.scipy.stats._gumbel import where_scale_ok


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_l.logpdf``: ``z - e^z - log scale``."""
    x, loc, scale = promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return where_scale_ok(scale, xlogy(-1, scale) + (z - lax.exp(z)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_l.pdf``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_l.logcdf``: ``log(1 - exp(-e^z))``."""
    x, loc, scale = promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return where_scale_ok(scale, lax.log(-lax.expm1(-lax.exp(z))))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_l.cdf``."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_l.ppf``: ``loc + scale log(-log1p(-p))``; NaN off
    (0, 1)."""
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    quantile = loc + scale * lax.log(xlog1py(-1, -p))
    return jnp.where((p > 0) & (p < 1), quantile, np.nan)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_l.logsf``: ``-e^z``."""
    x, loc, scale = promote_args_inexact("gumbel_l.logsf", x, loc, scale)
    return where_scale_ok(scale, -lax.exp((x - loc) / scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gumbel_l.sf``."""
    return jnp.exp(logsf(x, loc, scale))
