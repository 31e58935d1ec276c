"""``jax.scipy.stats.gamma``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.gamma_functions import gammainc, gammaincc
from tinyxla._src.scipy.special import xlogy


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gamma.logpdf``: -inf below ``loc``."""
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, lax.full_like(x, 1))
    log_probs = xlogy(a - 1, y) - y - (lax.lgamma(a) + lax.log(scale))
    return jnp.where(ok, log_probs, -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gamma.pdf``."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gamma.cdf``: ``gammainc(a, (x - loc) / scale)``."""
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, lax.clamp(lax._const(x, 0), (x - loc) / scale, lax._const(x, np.inf)))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gamma.logcdf``."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gamma.sf``: ``gammaincc(a, y)``, 1 below ``loc``."""
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, lax.full_like(y, 1), gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.gamma.logsf``."""
    return lax.log(sf(x, a, loc, scale))
