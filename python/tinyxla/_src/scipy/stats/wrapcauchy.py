"""``jax.scipy.stats.wrapcauchy``: the wrapped Cauchy distribution on [0, 2π]."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, c: Any) -> Any:
    """Mirrors ``jax.scipy.stats.wrapcauchy.logpdf``: -inf off [0, 2π], NaN for c off
    (0, 1)."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    value = (lax.log(1 - c * c) - float(np.log(2 * np.pi))
             - lax.log(1 + c * c - 2 * c * lax.cos(x)))
    inside = (x >= 0) & (x <= 2 * np.pi)
    return jnp.where((c > 0) & (c < 1), jnp.where(inside, value, -np.inf), np.nan)


def pdf(x: Any, c: Any) -> Any:
    """Mirrors ``jax.scipy.stats.wrapcauchy.pdf``."""
    return lax.exp(logpdf(x, c))
