"""``jax.scipy.stats.binom``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.special import xlog1py, xlogy


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.binom.logpmf``: ``log C(n, y) + y log p + (n - y)
    log(1 - p)`` at y = k - loc, -inf off [loc, loc + n]."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb_term = lax.lgamma(n + 1) - (lax.lgamma(y + 1) + lax.lgamma(n - y + 1))
    log_linear_term = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = comb_term + log_linear_term
    log_probs = jnp.where(((y == 0) & (n == 0)) | (log_linear_term == 0),
                          lax.full_like(log_probs, 0), log_probs)
    return jnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.binom.pmf``."""
    return lax.exp(logpmf(k, n, p, loc))
