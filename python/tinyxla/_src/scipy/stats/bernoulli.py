"""``jax.scipy.stats.bernoulli``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.special import xlog1py, xlogy


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.bernoulli.logpmf``: ``k log p + (1-k) log(1-p)`` on
    {0, 1} (shifted by ``loc``), -inf elsewhere."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
    return jnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.bernoulli.pmf``."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Any:
    """Mirrors ``jax.scipy.stats.bernoulli.cdf``: 0 below 0, ``1 - p`` on [0, 1), 1 above;
    NaN for NaN arguments or p outside [0, 1]."""
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    bad = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    value = jnp.where(k < 0, lax.full_like(k, 0), jnp.where(k < 1, 1 - p, lax.full_like(k, 1)))
    return jnp.where(bad, np.nan, value)


def ppf(q: Any, p: Any) -> Any:
    """Mirrors ``jax.scipy.stats.bernoulli.ppf``: 0 for q <= 1 - p, else 1."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(bad, np.nan, jnp.where(q <= 1 - p, lax.full_like(q, 0),
                                            lax.full_like(q, 1)))
