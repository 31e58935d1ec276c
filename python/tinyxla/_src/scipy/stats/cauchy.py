"""``jax.scipy.stats.cauchy``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.cauchy.logpdf``: ``-log(π scale (1 + z²))``."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(lax.log(np.pi * scale) + lax.log1p(z * z))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.cauchy.pdf``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.cauchy.cdf``: ``1/2 + atan(z) / π``."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    return 0.5 + lax.atan((x - loc) / scale) / np.pi


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.cauchy.logcdf``."""
    return lax.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.cauchy.sf``: ``cdf(-x, -loc)``."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.cauchy.logsf``."""
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.cauchy.isf``: ``loc + scale tan(π/2 - π q)``."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    return lax.tan(np.pi / 2 - np.pi * q) * scale + loc


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.cauchy.ppf``: ``loc + scale tan(π q - π/2)``."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    return lax.tan(np.pi * q - np.pi / 2) * scale + loc
