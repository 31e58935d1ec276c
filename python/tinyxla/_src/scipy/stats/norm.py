"""``jax.scipy.stats.norm``: the normal distribution's density and distribution functions."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy import error_functions, special


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.norm.logpdf``: ``-((x-loc)²/scale² + log(2π scale²)) / 2``."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(lax.mul(lax._const(x, 2 * np.pi), scale_sqrd))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
    return lax.div(lax.add(log_normalizer, quadratic), lax._const(x, -2))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.norm.pdf``: ``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.norm.cdf``: ``ndtr((x - loc) / scale)``."""
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.norm.sf``: ``1 - cdf``, computed as ``cdf(-x, -loc)``."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.norm.ppf``: ``ndtri(q) * scale + loc`` (see ``ndtri``)."""
    q, loc, scale = promote_args_inexact("norm.ppf", q, loc, scale)
    return special.ndtri(q) * scale + loc


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.norm.logcdf``: ``log_ndtr((x - loc) / scale)``."""
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return error_functions.log_ndtr(lax.div(lax.sub(x, loc), scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.norm.logsf``: ``logcdf(-x, -loc)``."""
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.norm.isf``: ``ppf(1 - q)``."""
    q, loc, scale = promote_args_inexact("norm.isf", q, loc, scale)
    return ppf(lax.sub(lax._const(q, 1), q), loc, scale)
