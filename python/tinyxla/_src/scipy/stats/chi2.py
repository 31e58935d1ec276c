"""``jax.scipy.stats.chi2``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.gamma_functions import gammainc, gammaincc


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.chi2.logpdf``: -inf below ``loc``."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    kernel = (half_df - 1) * lax.log(y) - y / 2
    normalizer = -(lax.lgamma(half_df) + float(np.log(2.)) * df / 2)
    return jnp.where(x < loc, -np.inf, normalizer - lax.log(scale) + kernel)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.chi2.pdf``."""
    return lax.exp(logpdf(x, df, loc, scale))


def _half_standardized(x: Any, loc: Any, scale: Any) -> Any:
    return lax.clamp(lax._const(x, 0), (x - loc) / (scale * 2), lax._const(x, np.inf))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.chi2.cdf``: ``gammainc(df / 2, y / 2)``."""
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(df / 2, _half_standardized(x, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.chi2.logcdf``."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.chi2.sf``: ``gammaincc(df / 2, y / 2)``."""
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(df / 2, _half_standardized(x, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.chi2.logsf``."""
    return lax.log(sf(x, df, loc, scale))
