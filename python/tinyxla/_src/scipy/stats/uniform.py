"""``jax.scipy.stats.uniform``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.uniform.logpdf``: ``-log scale`` on [loc, loc + scale]."""
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    return jnp.where((x > loc + scale) | (x < loc), -np.inf, -lax.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.uniform.pdf``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.uniform.cdf``: 0 below, 1 above, linear between; NaN for
    NaN arguments."""
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    value = jnp.where(x < loc, 0., jnp.where(x > loc + scale, 1., (x - loc) / scale))
    return jnp.where((x < loc) | (x > loc + scale) | inside, value, 0.).astype(x.dtype)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.uniform.ppf``: ``loc + scale q``; NaN off [0, 1]."""
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
