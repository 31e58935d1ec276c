"""``jax.scipy.stats.truncnorm``: the normal distribution truncated to [a, b] (in units of
``scale`` about ``loc``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.error_functions import log_ndtr
from tinyxla._src.scipy.special import ndtr
from tinyxla._src.scipy.stats import norm


def _log_diff(x: Any, y: Any) -> Any:
    """log(e^x - e^y) for x >= y."""
    return x + lax.log1p(-lax.exp(y - x))


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """log of the standard normal mass on [a, b], from the tail that keeps the digits."""
    a, b = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(b))
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    a_tail = jnp.where(case_right, -b, a)
    b_tail = jnp.where(case_right, -a, b)
    mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    mass_central = jnp.log1p(-ndtr(a) - ndtr(-b))
    return jnp.where(case_central, mass_central, mass_tail)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.truncnorm.logpdf``: -inf off [a, b], NaN for a >= b."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    val = jnp.where((z < a) | (z > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.truncnorm.pdf``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.truncnorm.logcdf``: the mass on [a, x] over that on
    [a, b], through the upper mass where the result is near 0."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = (x - loc) / scale
    lgm_ab = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, x) - lgm_ab
    log_sf = _log_gauss_mass(x, b) - lgm_ab
    value = jnp.where(x >= b, 0., jnp.where(x <= a, -np.inf, jnp.where(
        log_cdf > -0.1, jnp.log1p(-jnp.exp(log_sf)), log_cdf)))
    return jnp.where(a >= b, np.nan, value)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.truncnorm.cdf``."""
    return lax.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.truncnorm.logsf``: ``logcdf(-x, -b, -a, -loc)``."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.truncnorm.sf``."""
    return lax.exp(logsf(x, a, b, loc, scale))
